package ray

// RayService golden harness: KubeRay's own RayService builders on JSON RayServices.
// GOLDEN_IN=<cases.json> GOLDEN_OUT=<out.json> go test -run TestRayServiceGoldenHarness ./controllers/ray/

import (
	"context"
	"encoding/json"
	"os"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/common"
)

type rsGoldenCase struct {
	Name       string          `json:"name"`
	RayService json.RawMessage `json:"rayService"`
}

type rsGoldenOut struct {
	Name       string `json:"name"`
	Cluster    any    `json:"cluster,omitempty"`
	ClusterErr string `json:"clusterErr,omitempty"`
	HeadSvc    any    `json:"headService,omitempty"`
	HeadErr    string `json:"headErr,omitempty"`
	ServeSvc   any    `json:"serveService,omitempty"`
	ServeErr   string `json:"serveErr,omitempty"`
}

func TestRayServiceGoldenHarness(t *testing.T) {
	in := os.Getenv("GOLDEN_IN")
	if in == "" {
		t.Skip("GOLDEN_IN not set")
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var cases []rsGoldenCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = rayv1.AddToScheme(scheme)
	ctx := context.Background()
	out := []rsGoldenOut{}
	for _, c := range cases {
		var rs rayv1.RayService
		if err := json.Unmarshal(c.RayService, &rs); err != nil {
			t.Fatal(c.Name, err)
		}
		o := rsGoldenOut{Name: c.Name}
		cluster, err := constructRayClusterForRayService(&rs, rs.Name+"-abcde", scheme)
		if err != nil {
			o.ClusterErr = err.Error()
		} else {
			o.Cluster = cluster
			head, err := common.BuildHeadServiceForRayService(ctx, rs, *cluster)
			if err != nil {
				o.HeadErr = err.Error()
			} else {
				o.HeadSvc = head
			}
			serve, err := common.BuildServeServiceForRayService(ctx, rs, *cluster)
			if err != nil {
				o.ServeErr = err.Error()
			} else {
				o.ServeSvc = serve
			}
		}
		out = append(out, o)
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("GOLDEN_OUT"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
