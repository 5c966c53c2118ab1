package ray

// mTLS golden-output harness: runs KubeRay's own RayClusterMTLSController.Reconcile once per
// case against controller-runtime's fake client (the RayCluster and its pods) and prints the
// Issuers and Certificates it created, sorted by name.
// MTLS_GOLDEN_IN=<cases.json> MTLS_GOLDEN_OUT=<out.json> go test -run TestMTLSGoldenHarness ./controllers/ray/

import (
	"context"
	"encoding/json"
	"os"
	"sort"
	"testing"

	certmanagerv1 "github.com/cert-manager/cert-manager/pkg/apis/certmanager/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	clientFake "sigs.k8s.io/controller-runtime/pkg/client/fake"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/pkg/features"
	ctrl "sigs.k8s.io/controller-runtime"
)

type mtlsGoldenCase struct {
	Name    string            `json:"name"`
	Cluster json.RawMessage   `json:"cluster"`
	Pods    []json.RawMessage `json:"pods"`
}

type mtlsGoldenOut struct {
	Name    string   `json:"name"`
	Err     string   `json:"err,omitempty"`
	Objects []any    `json:"objects"`
}

func TestMTLSGoldenHarness(t *testing.T) {
	in, out := os.Getenv("MTLS_GOLDEN_IN"), os.Getenv("MTLS_GOLDEN_OUT")
	if in == "" || out == "" {
		t.Skip("MTLS_GOLDEN_IN / MTLS_GOLDEN_OUT not set")
	}
	features.SetFeatureGateDuringTest(t, features.RayClusterMTLS, true)
	raw, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var cases []mtlsGoldenCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	results := []mtlsGoldenOut{}
	for _, c := range cases {
		s := runtime.NewScheme()
		_ = rayv1.AddToScheme(s)
		_ = corev1.AddToScheme(s)
		_ = certmanagerv1.AddToScheme(s)
		cluster := &rayv1.RayCluster{}
		if err := json.Unmarshal(c.Cluster, cluster); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		objs := []runtime.Object{cluster}
		for _, p := range c.Pods {
			pod := &corev1.Pod{}
			if err := json.Unmarshal(p, pod); err != nil {
				t.Fatalf("%s: %v", c.Name, err)
			}
			objs = append(objs, pod)
		}
		fc := clientFake.NewClientBuilder().WithScheme(s).WithRuntimeObjects(objs...).
			WithStatusSubresource(&certmanagerv1.Certificate{}).Build()
		r := &RayClusterMTLSController{Client: fc, Scheme: s, Recorder: events.NewFakeRecorder(64)}
		ctx := context.Background()
		req := ctrl.Request{}
		req.Name, req.Namespace = cluster.Name, cluster.Namespace
		o := mtlsGoldenOut{Name: c.Name, Objects: []any{}}
		if _, err := r.Reconcile(ctx, req); err != nil {
			o.Err = err.Error()
		}
		issuers := &certmanagerv1.IssuerList{}
		certs := &certmanagerv1.CertificateList{}
		_ = fc.List(ctx, issuers, client.InNamespace(cluster.Namespace))
		_ = fc.List(ctx, certs, client.InNamespace(cluster.Namespace))
		for i := range issuers.Items {
			it := issuers.Items[i]
			it.ResourceVersion = ""
			it.APIVersion, it.Kind = "cert-manager.io/v1", "Issuer"
			o.Objects = append(o.Objects, it)
		}
		for i := range certs.Items {
			it := certs.Items[i]
			it.ResourceVersion = ""
			it.APIVersion, it.Kind = "cert-manager.io/v1", "Certificate"
			o.Objects = append(o.Objects, it)
		}
		sort.SliceStable(o.Objects, func(i, j int) bool {
			a, _ := json.Marshal(o.Objects[i])
			b, _ := json.Marshal(o.Objects[j])
			var ma, mb map[string]any
			_ = json.Unmarshal(a, &ma)
			_ = json.Unmarshal(b, &mb)
			return ma["metadata"].(map[string]any)["name"].(string) < mb["metadata"].(map[string]any)["name"].(string)
		})
		results = append(results, o)
	}
	data, err := json.MarshalIndent(results, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
