package ray

// Batch-scheduler golden-output harness: for each case, selects KubeRay's plugin through
// batchscheduler.NewSchedulerManager (controller-runtime's fake client) and records
//   - the objects DoBatchSchedulingOnSubmission stored (PodGroups of both APIs, after any the
//     case pre-stores), its error;
//   - the head pod and the first worker pod of each group as buildHeadPod/buildWorkerPod make
//     them, before and after AddMetadataToChildResource;
//   - for a RayJob: DoBatchSchedulingOnSubmission on the RayJob, the RayCluster
//     constructRayClusterForRayJob builds before/after AddMetadataToChildResource (K8sJobMode,
//     group ""), then the RayCluster steps above on that cluster (same fake client), and the
//     submitter pod template (getSubmitterTemplate) before/after AddMetadataToChildResource with
//     "submittergroup" (K8sJobMode); then CleanupOnCompletion on the RayJob with its RayCluster
//     stored, and again after it is deleted.
// BS_GOLDEN_IN=<cases.json> BS_GOLDEN_OUT=<out.json> go test -run TestBatchSchedulerGoldenHarness ./controllers/ray/

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	clientFake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	sigsjson "sigs.k8s.io/json"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanoschedulingv1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	configapi "github.com/ray-project/kuberay/ray-operator/apis/config/v1alpha1"
	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/batchscheduler"
	schedulerinterface "github.com/ray-project/kuberay/ray-operator/controllers/ray/batchscheduler/interface"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
)

type bsGoldenCase struct {
	Name        string          `json:"name"`
	Scheduler   string          `json:"scheduler"`
	Cluster     json.RawMessage `json:"cluster,omitempty"`
	RayJob      json.RawMessage `json:"rayjob,omitempty"`
	ClusterName string          `json:"clusterName,omitempty"`
	// Objects already stored (PodGroups as unstructured JSON), e.g. a stale PodGroup.
	Existing []json.RawMessage `json:"existing,omitempty"`
}

type bsChild struct {
	Group  string `json:"group"`
	Before any    `json:"before"`
	After  any    `json:"after"`
}

type bsGoldenOut struct {
	Name    string         `json:"name"`
	Err     string         `json:"err,omitempty"`
	Objects map[string]any `json:"objects"`
}

// bsStored lists the PodGroups in ns, resourceVersion kept (the fake client's counter: "1"
// when created, +1 per update) so that an update is visible.
func bsStored(ctx context.Context, fc client.Client, ns string) []any {
	objs := []any{}
	vpgs := &volcanoschedulingv1beta1.PodGroupList{}
	_ = fc.List(ctx, vpgs, client.InNamespace(ns))
	for i := range vpgs.Items {
		it := vpgs.Items[i]
		it.APIVersion, it.Kind = "scheduling.volcano.sh/v1beta1", "PodGroup"
		objs = append(objs, it)
	}
	spgs := &schedulerpluginsv1alpha1.PodGroupList{}
	_ = fc.List(ctx, spgs, client.InNamespace(ns))
	for i := range spgs.Items {
		it := spgs.Items[i]
		it.APIVersion, it.Kind = "scheduling.x-k8s.io/v1alpha1", "PodGroup"
		objs = append(objs, it)
	}
	sort.SliceStable(objs, func(i, j int) bool {
		return fmt.Sprint(bsKey(objs[i])) < fmt.Sprint(bsKey(objs[j]))
	})
	return objs
}

func bsKey(o any) string {
	b, _ := json.Marshal(o)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return fmt.Sprintf("%v/%v", m["apiVersion"], m["metadata"].(map[string]any)["name"])
}

func bsCall(fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return fn()
}

func bsErrString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// bsClusterSteps runs the RayCluster controller's scheduler calls on inst.
func bsClusterSteps(ctx context.Context, sched schedulerinterface.BatchScheduler, fc client.Client, scheme *runtime.Scheme, inst *rayv1.RayCluster, objs map[string]any, prefix string) {
	setDefaults(inst)
	objs[prefix+"parent"] = inst.DeepCopy()
	objs[prefix+"submitErr"] = bsErrString(bsCall(func() error { return sched.DoBatchSchedulingOnSubmission(ctx, inst.DeepCopy()) }))
	objs[prefix+"stored"] = bsStored(ctx, fc, inst.Namespace)
	r := &RayClusterReconciler{Scheme: scheme}
	children := []bsChild{}
	head := r.buildHeadPod(ctx, *inst.DeepCopy())
	before := head.DeepCopy()
	sched.AddMetadataToChildResource(ctx, inst.DeepCopy(), &head, utils.RayNodeHeadGroupLabelValue)
	children = append(children, bsChild{Group: utils.RayNodeHeadGroupLabelValue, Before: before, After: head})
	for _, g := range inst.Spec.WorkerGroupSpecs {
		pod := r.buildWorkerPod(ctx, *inst.DeepCopy(), *g.DeepCopy(), "", 0, 0)
		before := pod.DeepCopy()
		sched.AddMetadataToChildResource(ctx, inst.DeepCopy(), &pod, g.GroupName)
		children = append(children, bsChild{Group: g.GroupName, Before: before, After: pod})
	}
	objs[prefix+"pods"] = children
}

func runBSGoldenCase(c bsGoldenCase, scheme *runtime.Scheme) (map[string]any, error) {
	ctx := context.Background()
	existing := []client.Object{}
	for _, raw := range c.Existing {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw); err != nil {
			return nil, err
		}
		existing = append(existing, u)
	}
	fc := clientFake.NewClientBuilder().WithScheme(scheme).WithObjects(existing...).Build()
	mgr, err := batchscheduler.NewSchedulerManager(ctx, configapi.Configuration{BatchScheduler: c.Scheduler}, nil, fc)
	if err != nil {
		return nil, err
	}
	sched, err := mgr.GetScheduler()
	if err != nil {
		return nil, err
	}
	objs := map[string]any{"schedulerName": sched.Name()}
	if len(c.Cluster) > 0 {
		inst := &rayv1.RayCluster{}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(c.Cluster, inst); err != nil {
			return nil, err
		}
		bsClusterSteps(ctx, sched, fc, scheme, inst, objs, "")
		return objs, nil
	}
	job := &rayv1.RayJob{}
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(c.RayJob, job); err != nil {
		return nil, err
	}
	objs["submitErr"] = bsErrString(bsCall(func() error { return sched.DoBatchSchedulingOnSubmission(ctx, job.DeepCopy()) }))
	objs["stored"] = bsStored(ctx, fc, job.Namespace)
	if job.Spec.RayClusterSpec == nil {
		return objs, nil
	}
	r := &RayJobReconciler{Scheme: scheme, Recorder: &events.FakeRecorder{}}
	cluster, err := r.constructRayClusterForRayJob(job.DeepCopy(), c.ClusterName)
	if err != nil {
		return nil, err
	}
	// With its kind, as it is sent and as the RayCluster controller reads it back (the
	// informer cache sets it); the plugins do not look at it.
	cluster.APIVersion, cluster.Kind = "ray.io/v1", "RayCluster"
	if job.Spec.SubmissionMode == rayv1.K8sJobMode {
		before := cluster.DeepCopy()
		sched.AddMetadataToChildResource(ctx, job.DeepCopy(), cluster, "")
		objs["rayCluster"] = bsChild{Before: before, After: cluster.DeepCopy()}
	}
	// Created: the apiserver gave it a uid.
	cluster.UID = types.UID("uid-" + cluster.Name)
	bsClusterSteps(ctx, sched, fc, scheme, cluster.DeepCopy(), objs, "cluster.")
	// CleanupOnCompletion once the RayJob finished: with its RayCluster still there, then
	// after the RayCluster is gone.
	stored := cluster.DeepCopy()
	stored.ResourceVersion = ""
	if err := fc.Create(ctx, stored); err != nil {
		return nil, err
	}
	for _, step := range []string{"cleanupClusterPresent", "cleanupClusterGone"} {
		if step == "cleanupClusterGone" {
			if err := fc.Delete(ctx, stored); err != nil {
				return nil, err
			}
		}
		var did bool
		err := bsCall(func() (err error) {
			did, err = sched.CleanupOnCompletion(ctx, job.DeepCopy())
			return err
		})
		objs[step] = map[string]any{"did": did, "err": bsErrString(err), "stored": bsStored(ctx, fc, job.Namespace)}
	}
	if job.Spec.SubmissionMode == rayv1.K8sJobMode {
		tmpl, err := getSubmitterTemplate(job.DeepCopy(), cluster.DeepCopy())
		if err != nil {
			objs["submitterErr"] = err.Error()
		} else {
			before := tmpl.DeepCopy()
			sched.AddMetadataToChildResource(ctx, job.DeepCopy(), &tmpl, utils.RayNodeSubmitterGroupLabelValue)
			objs["submitter"] = bsChild{Group: utils.RayNodeSubmitterGroupLabelValue, Before: before, After: tmpl}
		}
	}
	return objs, nil
}

func TestBatchSchedulerGoldenHarness(t *testing.T) {
	in, out := os.Getenv("BS_GOLDEN_IN"), os.Getenv("BS_GOLDEN_OUT")
	if in == "" || out == "" {
		t.Skip("BS_GOLDEN_IN / BS_GOLDEN_OUT not set")
	}
	raw, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var cases []bsGoldenCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	results := []bsGoldenOut{}
	for _, c := range cases {
		scheme := runtime.NewScheme()
		_ = rayv1.AddToScheme(scheme)
		_ = corev1.AddToScheme(scheme)
		_ = batchv1.AddToScheme(scheme)
		_ = volcanoschedulingv1beta1.AddToScheme(scheme)
		_ = schedulerpluginsv1alpha1.AddToScheme(scheme)
		objs, err := runBSGoldenCase(c, scheme)
		o := bsGoldenOut{Name: c.Name, Objects: objs}
		if err != nil {
			o.Err = err.Error()
		}
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
