// Reads a JSON array of {"name": ..., "spec": <RayClusterSpec>} from stdin and
// writes, for each, the Go encoding/json bytes of the spec with the fields KubeRay
// mutes for its upgrade hash, and the resulting SHA-1/base32hex hash.
package main

import (
	"crypto/sha1"
	"encoding/base32"
	"encoding/json"
	"io"
	"os"

	sigsjson "sigs.k8s.io/json"

	rayv1 "goschema/rayv1"
)

type input struct {
	Name string          `json:"name"`
	Spec json.RawMessage `json:"spec"`
}

type output struct {
	Name          string `json:"name"`
	JSON          string `json:"json"`
	Hash          string `json:"hash"`
	HashDefaulted string `json:"hash_defaulted"`
	Err           string `json:"err,omitempty"`
}

func muted(spec rayv1.RayClusterSpec) rayv1.RayClusterSpec {
	s := spec.DeepCopy()
	s.HeadGroupSpec.Template.Spec.Tolerations = nil
	s.HeadGroupSpec.Template.Spec.SchedulingGates = nil
	for i := range s.WorkerGroupSpecs {
		g := &s.WorkerGroupSpecs[i]
		g.Replicas, g.MinReplicas, g.MaxReplicas = nil, nil, nil
		g.ScaleStrategy.WorkersToDelete = nil
		g.Template.Spec.Tolerations = nil
		g.Template.Spec.SchedulingGates = nil
	}
	s.UpgradeStrategy = nil
	return *s
}

func main() {
	data, _ := io.ReadAll(os.Stdin)
	var ins []input
	if err := json.Unmarshal(data, &ins); err != nil {
		panic(err)
	}
	outs := []output{}
	for _, in := range ins {
		var spec rayv1.RayClusterSpec
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(in.Spec, &spec); err != nil {
			outs = append(outs, output{Name: in.Name, Err: err.Error()})
			continue
		}
		b, err := json.Marshal(muted(spec))
		if err != nil {
			outs = append(outs, output{Name: in.Name, Err: err.Error()})
			continue
		}
		sum := sha1.Sum(b)
		o := output{Name: in.Name, JSON: string(b), Hash: base32.HexEncoding.EncodeToString(sum[:])}
		// KubeRay's RayCluster setDefaults: nil rayStartParams become empty maps.
		if spec.HeadGroupSpec.RayStartParams == nil {
			spec.HeadGroupSpec.RayStartParams = map[string]string{}
		}
		for i := range spec.WorkerGroupSpecs {
			if spec.WorkerGroupSpecs[i].RayStartParams == nil {
				spec.WorkerGroupSpecs[i].RayStartParams = map[string]string{}
			}
		}
		b2, _ := json.Marshal(muted(spec))
		sum2 := sha1.Sum(b2)
		o.HashDefaulted = base32.HexEncoding.EncodeToString(sum2[:])
		outs = append(outs, o)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	_ = enc.Encode(outs)
}
