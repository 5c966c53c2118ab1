// Dumps the encoding/json layout (field order, type, omitempty/omitzero) of every Go struct
// reachable from KubeRay's RayClusterSpec as JSON; gen_go_struct_schema.py turns it into
// kuberay/controllers/common/go_struct_schema.py.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	rayv1 "goschema/rayv1"
)

type Field struct {
	Name      string `json:"name"`
	Type      any    `json:"type"`
	OmitEmpty bool   `json:"omitempty"`
	OmitZero  bool   `json:"omitzero"`
}

var types = map[string][]Field{}
var marshalerT = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

func typeName(t reflect.Type) string {
	p := t.PkgPath()
	parts := strings.Split(p, "/")
	pk := parts[len(parts)-1]
	if len(parts) >= 2 {
		pk = parts[len(parts)-2] + "/" + pk
	}
	return pk + "." + t.Name()
}

func desc(t reflect.Type) any {
	if t.Kind() == reflect.Ptr {
		return []any{"ptr", desc(t.Elem())}
	}
	switch t {
	case reflect.TypeOf(resource.Quantity{}):
		return "quantity"
	case reflect.TypeOf(intstr.IntOrString{}):
		return "intorstring"
	case reflect.TypeOf(metav1.Time{}):
		return "time"
	case reflect.TypeOf(metav1.MicroTime{}):
		return "microtime"
	}
	if t.Implements(marshalerT) || reflect.PointerTo(t).Implements(marshalerT) {
		return "custom:" + typeName(t)
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "int"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "uint"
	case reflect.Float32:
		return "float32"
	case reflect.Float64:
		return "float64"
	case reflect.Ptr:
		return []any{"ptr", desc(t.Elem())}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "bytes"
		}
		return []any{"slice", desc(t.Elem())}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			panic("non-string map key " + t.String())
		}
		return []any{"map", desc(t.Elem())}
	case reflect.Interface:
		return "any"
	case reflect.Struct:
		n := typeName(t)
		if _, ok := types[n]; !ok {
			types[n] = nil
			types[n] = fields(t)
		}
		return []any{"struct", n}
	}
	panic("unhandled kind " + t.String())
}

func fields(t reflect.Type) []Field {
	out := []Field{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Ptr {
				panic("anonymous pointer embed " + t.String())
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, fields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		o := Field{Name: name, Type: desc(f.Type)}
		for _, op := range strings.Split(opts, ",") {
			switch op {
			case "omitempty":
				o.OmitEmpty = true
			case "omitzero":
				o.OmitZero = true
			case "inline", "":
			case "string":
				panic("string opt " + t.String() + "." + f.Name)
			default:
				panic("opt " + op)
			}
		}
		out = append(out, o)
	}
	return out
}

func main() {
	roots := map[string]any{
		"RayClusterSpec": desc(reflect.TypeOf(rayv1.RayClusterSpec{})),
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(map[string]any{"roots": roots, "types": types}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
