package ray

// RayJob golden-output harness: runs KubeRay's own RayJob builders on JSON cases and prints
// what they produce (submit commands, the RayCluster and the head pod built from it, the
// submitter Job, the RayJob head Service, the HTTPMode submit body).
// RAYJOB_GOLDEN_IN=<cases.json> RAYJOB_GOLDEN_OUT=<out.json> go test -run TestRayJobGoldenHarness ./controllers/ray/

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	clientFake "sigs.k8s.io/controller-runtime/pkg/client/fake"
	sigsjson "sigs.k8s.io/json"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/common"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils/dashboardclient"
)

type rayJobGoldenCase struct {
	Name        string            `json:"name"`
	RayJob      json.RawMessage   `json:"rayjob"`
	ClusterName string            `json:"clusterName"`
	Cluster     json.RawMessage   `json:"cluster,omitempty"`
	Env         map[string]string `json:"env"`
	Features    map[string]bool   `json:"features"`
}

type rayJobGoldenOut struct {
	Name    string         `json:"name"`
	Err     string         `json:"err,omitempty"`
	Objects map[string]any `json:"objects"`
}

var rayJobGoldenEnvKeys = []string{"ENABLE_LOGIN_SHELL", "ENABLE_RAY_HEAD_CLUSTER_IP_SERVICE", "CLUSTER_DOMAIN"}

var rayJobGoldenGates = map[string]bool{
	"RayClusterStatusConditions": true, "RayJobDeletionPolicy": true, "RayMultiHostIndexing": true,
	"RayServiceIncrementalUpgrade": true, "RayCronJob": false, "SidecarSubmitterRestart": false,
	"RayClusterNetworkPolicy": false, "GCSFaultToleranceEmbeddedStorage": false, "RayClusterMTLS": false,
	"RayClusterHistoryServer": false, "KubernetesWAS": false,
}

// rayJobGoldenRecord stores fn's result under key, or its error (or panic) under key+"Err".
func rayJobGoldenRecord(objs map[string]any, key string, fn func() (any, error)) {
	value, err := func() (value any, err error) {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("panic: %v", p)
			}
		}()
		return fn()
	}()
	if err != nil {
		objs[key+"Err"] = err.Error()
		return
	}
	objs[key] = value
}

func runRayJobGoldenCase(c rayJobGoldenCase, scheme *runtime.Scheme) (map[string]any, error) {
	for _, k := range rayJobGoldenEnvKeys {
		os.Unsetenv(k)
	}
	for k, v := range c.Env {
		os.Setenv(k, v)
	}
	gates := map[string]bool{}
	for k, v := range rayJobGoldenGates {
		gates[k] = v
	}
	for k, v := range c.Features {
		gates[k] = v
	}
	if err := utilfeature.DefaultMutableFeatureGate.SetFromMap(gates); err != nil {
		return nil, err
	}
	var job rayv1.RayJob
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(c.RayJob, &job); err != nil {
		return nil, err
	}
	ctx := context.Background()
	objs := map[string]any{}

	for _, mode := range []rayv1.JobSubmissionMode{rayv1.K8sJobMode, rayv1.SidecarMode} {
		rayJobGoldenRecord(objs, "command:"+string(mode), func() (any, error) {
			return common.BuildJobSubmitCommand(job.DeepCopy(), mode)
		})
	}

	var cluster *rayv1.RayCluster
	if job.Spec.RayClusterSpec != nil {
		rayJobGoldenRecord(objs, "rayCluster", func() (any, error) {
			r := &RayJobReconciler{Scheme: scheme, Recorder: &events.FakeRecorder{}}
			rc, err := r.constructRayClusterForRayJob(job.DeepCopy(), c.ClusterName)
			if err == nil {
				cluster = rc
			}
			return rc, err
		})
	} else if len(c.Cluster) > 0 {
		cluster = &rayv1.RayCluster{}
		if err := sigsjson.UnmarshalCaseSensitivePreserveInts(c.Cluster, cluster); err != nil {
			return nil, err
		}
	}

	if cluster != nil && job.Spec.RayClusterSpec != nil {
		// The head pod the RayCluster controller then builds (SidecarMode: with the submitter).
		rayJobGoldenRecord(objs, "headPod", func() (any, error) {
			inst := cluster.DeepCopy()
			setDefaults(inst)
			hash, err := utils.GenerateHashWithoutReplicasAndWorkersToDelete(inst.Spec)
			if err != nil {
				return nil, err
			}
			r := &RayClusterReconciler{Scheme: scheme}
			head := r.buildHeadPod(ctx, *inst)
			head.Annotations[utils.UpgradeStrategyRecreateHashKey] = hash
			head.Annotations[utils.KubeRayVersion] = utils.KUBERAY_VERSION
			return head, nil
		})
	}

	if cluster != nil {
		rayJobGoldenRecord(objs, "submitterJob", func() (any, error) {
			fc := clientFake.NewClientBuilder().WithScheme(scheme).Build()
			r := &RayJobReconciler{Client: fc, Scheme: scheme, Recorder: &events.FakeRecorder{}}
			if err := r.createK8sJobIfNeed(ctx, job.DeepCopy(), cluster.DeepCopy()); err != nil {
				return nil, err
			}
			created := &batchv1.Job{}
			err := fc.Get(ctx, common.RayJobK8sJobNamespacedName(&job), created)
			return created, err
		})
		if len(job.Spec.ClusterSelector) == 0 {
			rayJobGoldenRecord(objs, "headService", func() (any, error) {
				svc, err := common.BuildHeadServiceForRayJob(ctx, *job.DeepCopy(), *cluster.DeepCopy())
				if err != nil {
					return nil, err
				}
				// reconcileServices sets the RayJob as controller before creating it.
				err = ctrl.SetControllerReference(&job, svc, scheme)
				return svc, err
			})
		}
	}

	rayJobGoldenRecord(objs, "submitBody", func() (any, error) {
		req, err := dashboardclient.ConvertRayJobToReq(job.DeepCopy())
		if err != nil {
			return nil, err
		}
		body, err := json.Marshal(req)
		return string(body), err
	})
	return objs, nil
}

func TestRayJobGoldenHarness(t *testing.T) {
	in := os.Getenv("RAYJOB_GOLDEN_IN")
	if in == "" {
		t.Skip("RAYJOB_GOLDEN_IN not set")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	var cases []rayJobGoldenCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = rayv1.AddToScheme(scheme)
	_ = corev1.AddToScheme(scheme)
	_ = batchv1.AddToScheme(scheme)
	outs := []rayJobGoldenOut{}
	for _, c := range cases {
		objs, err := runRayJobGoldenCase(c, scheme)
		o := rayJobGoldenOut{Name: c.Name, Objects: objs}
		if err != nil {
			o.Err = err.Error()
		}
		outs = append(outs, o)
	}
	b, err := json.MarshalIndent(outs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(os.Getenv("RAYJOB_GOLDEN_OUT"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
