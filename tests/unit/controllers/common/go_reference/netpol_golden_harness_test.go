package ray

// NetworkPolicy golden-output harness: runs KubeRay's own NetworkPolicy builders on JSON
// RayCluster cases and prints the head policy and one policy per worker group, as the
// controller would create them (mode defaulted as in Reconcile, controller ownerRef set).
// NETPOL_GOLDEN_IN=<cases.json> NETPOL_GOLDEN_OUT=<out.json> go test -run TestNetpolGoldenHarness ./controllers/ray/

import (
	"encoding/json"
	"os"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
)

type netpolGoldenCase struct {
	Name    string          `json:"name"`
	Cluster json.RawMessage `json:"cluster"`
}

type netpolGoldenOut struct {
	Name     string                        `json:"name"`
	Policies []*networkingv1.NetworkPolicy `json:"policies"`
}

func TestNetpolGoldenHarness(t *testing.T) {
	in, out := os.Getenv("NETPOL_GOLDEN_IN"), os.Getenv("NETPOL_GOLDEN_OUT")
	if in == "" || out == "" {
		t.Skip("NETPOL_GOLDEN_IN / NETPOL_GOLDEN_OUT not set")
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var cases []netpolGoldenCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	_ = rayv1.AddToScheme(scheme)
	r := &NetworkPolicyController{Scheme: scheme}
	results := []netpolGoldenOut{}
	for _, c := range cases {
		cluster := &rayv1.RayCluster{}
		if err := json.Unmarshal(c.Cluster, cluster); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		mode := rayv1.NetworkPolicyDenyAll
		if cluster.Spec.NetworkPolicy.Mode != nil {
			mode = *cluster.Spec.NetworkPolicy.Mode
		}
		policies := []*networkingv1.NetworkPolicy{r.buildHeadNetworkPolicy(cluster, mode)}
		for _, group := range cluster.Spec.WorkerGroupSpecs {
			policies = append(policies, r.buildWorkerGroupNetworkPolicy(cluster, mode, group.GroupName))
		}
		for _, p := range policies {
			if err := controllerutil.SetControllerReference(cluster, p, scheme); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
		}
		results = append(results, netpolGoldenOut{Name: c.Name, Policies: policies})
	}
	data, err := json.MarshalIndent(results, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
