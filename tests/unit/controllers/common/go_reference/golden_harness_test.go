package ray

// Golden-output harness: runs KubeRay's own builders on JSON cases and prints the objects.
// GOLDEN_IN=<cases.json> GOLDEN_OUT=<out.json> go test -run TestGoldenHarness ./controllers/ray/

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	sigsjson "sigs.k8s.io/json"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/common"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
)

type goldenWorker struct {
	Group        int    `json:"group"`
	ReplicaName  string `json:"replicaName"`
	ReplicaIndex int    `json:"replicaIndex"`
	HostIndex    int    `json:"hostIndex"`
}

type goldenCase struct {
	Name                  string            `json:"name"`
	Cluster               json.RawMessage   `json:"cluster"`
	Env                   map[string]string `json:"env"`
	Features              map[string]bool   `json:"features"`
	DefaultContainerEnvs  []corev1.EnvVar   `json:"defaultContainerEnvs"`
	HeadSidecars          []corev1.Container `json:"headSidecars"`
	WorkerSidecars        []corev1.Container `json:"workerSidecars"`
	DefaultPodAnnotations map[string]string `json:"defaultPodAnnotations"`
	DefaultPodLabels      map[string]string `json:"defaultPodLabels"`
	Workers               []goldenWorker    `json:"workers"`
}

type goldenOut struct {
	Name    string         `json:"name"`
	Err     string         `json:"err,omitempty"`
	Objects map[string]any `json:"objects"`
}

var goldenEnvKeys = []string{"ENABLE_INIT_CONTAINER_INJECTION", "ENABLE_PROBES_INJECTION", "ENABLE_LOGIN_SHELL",
	"ENABLE_DETERMINISTIC_HEAD_POD_NAME", "CLUSTER_DOMAIN", "ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE"}

var goldenGateDefaults = map[string]bool{
	"RayClusterStatusConditions": true, "RayJobDeletionPolicy": true, "RayMultiHostIndexing": true,
	"RayServiceIncrementalUpgrade": true, "RayCronJob": false, "SidecarSubmitterRestart": false,
	"RayClusterNetworkPolicy": false, "GCSFaultToleranceEmbeddedStorage": false, "RayClusterMTLS": false,
	"RayClusterHistoryServer": false, "KubernetesWAS": false,
}

func runGoldenCase(c goldenCase, scheme *runtime.Scheme) (objs map[string]any, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	for _, k := range goldenEnvKeys {
		os.Unsetenv(k)
	}
	for k, v := range c.Env {
		os.Setenv(k, v)
	}
	gates := map[string]bool{}
	for k, v := range goldenGateDefaults {
		gates[k] = v
	}
	for k, v := range c.Features {
		gates[k] = v
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return nil, err
	}
	var rc rayv1.RayCluster
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(c.Cluster, &rc); err != nil {
		return nil, err
	}
	setDefaults(&rc)
	r := &RayClusterReconciler{Scheme: scheme, options: RayClusterReconcilerOptions{
		DefaultContainerEnvs: c.DefaultContainerEnvs, HeadSidecarContainers: c.HeadSidecars,
		WorkerSidecarContainers: c.WorkerSidecars, DefaultPodAnnotations: c.DefaultPodAnnotations,
		DefaultPodLabels: c.DefaultPodLabels,
	}}
	ctx := context.Background()
	objs = map[string]any{}
	hash, err := utils.GenerateHashWithoutReplicasAndWorkersToDelete(rc.Spec)
	if err != nil {
		return nil, err
	}
	objs["hash"] = hash

	head := r.buildHeadPod(ctx, *rc.DeepCopy())
	head.Annotations[utils.UpgradeStrategyRecreateHashKey] = hash
	head.Annotations[utils.KubeRayVersion] = utils.KUBERAY_VERSION
	objs["headPod"] = head

	workers := []any{}
	for _, w := range c.Workers {
		inst := rc.DeepCopy()
		g := inst.Spec.WorkerGroupSpecs[w.Group]
		workers = append(workers, r.buildWorkerPod(ctx, *inst, *g.DeepCopy(), w.ReplicaName, w.ReplicaIndex, w.HostIndex))
	}
	objs["workerPods"] = workers

	{
		inst := rc.DeepCopy()
		labels := map[string]string{}
		if val, ok := inst.Spec.HeadGroupSpec.Template.ObjectMeta.Labels[utils.KubernetesApplicationNameLabelKey]; ok {
			labels[utils.KubernetesApplicationNameLabelKey] = val
		}
		annotations := map[string]string{}
		for k, v := range inst.Spec.HeadServiceAnnotations {
			annotations[k] = v
		}
		svc, err := common.BuildServiceForHeadPod(ctx, *inst, labels, annotations)
		if err != nil {
			objs["headServiceErr"] = err.Error()
		} else {
			_ = controllerutil.SetControllerReference(inst, svc, scheme)
			objs["headService"] = svc
		}
	}
	{
		inst := rc.DeepCopy()
		svc := common.BuildHeadlessServiceForRayCluster(*inst)
		_ = controllerutil.SetControllerReference(inst, svc, scheme)
		objs["headlessService"] = svc
	}
	{
		inst := rc.DeepCopy()
		svc, err := common.BuildServeServiceForRayCluster(ctx, *inst)
		if err != nil {
			objs["serveServiceErr"] = err.Error()
		} else {
			_ = ctrl.SetControllerReference(inst, svc, scheme)
			objs["serveService"] = svc
		}
	}
	{
		inst := rc.DeepCopy()
		ing, err := common.BuildIngressForHeadService(ctx, *inst)
		if err == nil {
			_ = controllerutil.SetControllerReference(inst, ing, scheme)
			objs["ingress"] = ing
		}
		route, err := common.BuildRouteForHeadService(*inst)
		if err == nil {
			_ = ctrl.SetControllerReference(inst, route, scheme)
			route.Name = utils.CheckRouteName(ctx, route.Name, route.Namespace)
			objs["route"] = route
		}
	}
	{
		inst := rc.DeepCopy()
		sa, _ := common.BuildServiceAccount(inst)
		sa.Name = utils.CheckName(sa.Name)
		_ = controllerutil.SetControllerReference(inst, sa, scheme)
		objs["serviceAccount"] = sa
		role, _ := common.BuildRole(inst)
		role.Name = utils.CheckName(role.Name)
		_ = controllerutil.SetControllerReference(inst, role, scheme)
		objs["role"] = role
		rb, _ := common.BuildRoleBinding(inst)
		rb.Name = utils.CheckName(rb.Name)
		_ = controllerutil.SetControllerReference(inst, rb, scheme)
		objs["roleBinding"] = rb
	}
	if utils.IsGCSFaultToleranceEnabled(&rc.Spec, rc.Annotations) {
		inst := rc.DeepCopy()
		if utils.IsGCSFaultToleranceEmbedded(inst.Spec.GcsFaultToleranceOptions) {
			pvc := common.BuildGCSStoragePVC(inst)
			if !gcsStorageRetainOnDeletion(inst) {
				_ = ctrl.SetControllerReference(inst, pvc, scheme)
			}
			objs["gcsPVC"] = pvc
		} else {
			objs["redisCleanupJob"] = r.buildRedisCleanupJob(ctx, *inst)
		}
	}
	return objs, nil
}

func TestGoldenHarness(t *testing.T) {
	in := os.Getenv("GOLDEN_IN")
	if in == "" {
		t.Skip("GOLDEN_IN not set")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var cases []goldenCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = rayv1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	outs := []goldenOut{}
	for _, c := range cases {
		objs, err := runGoldenCase(c, scheme)
		o := goldenOut{Name: c.Name, Objects: objs}
		if err != nil {
			o.Err = err.Error()
		}
		outs = append(outs, o)
	}
	b, err := json.MarshalIndent(outs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("GOLDEN_OUT"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
