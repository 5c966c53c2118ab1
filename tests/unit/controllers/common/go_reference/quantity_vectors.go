// Reads a JSON array of quantity strings from stdin and prints, for each, what apimachinery's
// resource.Quantity makes of it (String, canonical form, Value, AsApproximateFloat64, x2, x3).
package main

import (
	"encoding/json"
	"io"
	"os"

	"k8s.io/apimachinery/pkg/api/resource"
)

type out struct {
	In     string `json:"in"`
	Str    string `json:"str,omitempty"`
	Canon  string `json:"canon,omitempty"`
	Value  int64  `json:"value"`
	Float  string `json:"float,omitempty"`
	Double string `json:"double,omitempty"`
	Times3 string `json:"times3,omitempty"`
	Err    bool   `json:"err,omitempty"`
}

func main() {
	data, _ := io.ReadAll(os.Stdin)
	var ins []string
	_ = json.Unmarshal(data, &ins)
	res := []out{}
	for _, s := range ins {
		q, err := resource.ParseQuantity(s)
		if err != nil {
			res = append(res, out{In: s, Err: true})
			continue
		}
		c := q.DeepCopy()
		c.Add(resource.Quantity{})
		d := q.DeepCopy()
		d.Add(q)
		m := q.DeepCopy()
		m.Mul(3)
		fb, _ := json.Marshal(q.AsApproximateFloat64())
		res = append(res, out{In: s, Str: q.String(), Canon: c.String(), Value: q.Value(), Float: string(fb), Double: d.String(), Times3: m.String()})
	}
	enc := json.NewEncoder(os.Stdout)
	_ = enc.Encode(res)
}
