// Command controller runs the part of cert-manager's controller that a self-signed + CA PKI
// needs, wired from the library packages of github.com/cert-manager/cert-manager (the
// upstream binary lives in a separate module the Go module proxy here does not serve).
//
// It runs: issuer and cluster-issuer readiness, the certificates-* controllers (trigger,
// key-manager, request-manager, issuing, readiness, revision-manager), the built-in
// CertificateRequest approver, and the CertificateRequest signers for SelfSigned and CA
// issuers. No ACME, Vault, Venafi, shims, metrics server, healthz or leader election.
//
// Usage:
//
//	controller --kubeconfig=PATH [--namespace=NS] [--cluster-resource-namespace=NS]
//	           [--workers=N] [--kube-api-qps=Q] [--kube-api-burst=B] [-v=N]
//
// It exits 0 on SIGINT/SIGTERM, non-zero when a controller fails to start or run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"golang.org/x/sync/errgroup"
	"k8s.io/klog/v2"

	"github.com/cert-manager/cert-manager/pkg/controller"
	logf "github.com/cert-manager/cert-manager/pkg/logs"

	// Each controller package registers itself with controller.Known() in its init.
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	crca "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	crselfsigned "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"

	// Issuer implementations the issuers/clusterissuers controllers check for readiness.
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned"
)

// controllers is the set this binary runs, by the names they registered under.
var controllers = []string{
	issuers.ControllerName,
	clusterissuers.ControllerName,
	trigger.ControllerName,
	keymanager.ControllerName,
	requestmanager.ControllerName,
	issuing.ControllerName,
	readiness.ControllerName,
	revisionmanager.ControllerName,
	approver.ControllerName,
	crselfsigned.CRControllerName,
	crca.CRControllerName,
}

type options struct {
	kubeconfig               string
	namespace                string
	clusterResourceNamespace string
	workers                  int
	qps                      float64
	burst                    int
}

func parseFlags() options {
	var o options
	klog.InitFlags(flag.CommandLine) // -v, -logtostderr, ...
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "path to a kubeconfig (required out of cluster)")
	flag.StringVar(&o.namespace, "namespace", "", "watch only this namespace (default: all)")
	flag.StringVar(&o.clusterResourceNamespace, "cluster-resource-namespace", "kube-system",
		"namespace holding the Secrets of ClusterIssuers")
	flag.IntVar(&o.workers, "workers", 5, "worker goroutines per controller")
	flag.Float64Var(&o.qps, "kube-api-qps", 20, "client-side QPS limit toward the apiserver")
	flag.IntVar(&o.burst, "kube-api-burst", 50, "client-side burst toward the apiserver")
	flag.Parse()
	return o
}

func main() {
	o := parseFlags()
	logf.InitLogs()
	defer logf.FlushLogs()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx = logf.NewContext(ctx, logf.Log, "controller")

	if err := run(ctx, o); err != nil {
		logf.Log.Error(err, "cert-manager controller failed")
		logf.FlushLogs()
		os.Exit(1)
	}
}

func run(ctx context.Context, o options) error {
	log := logf.FromContext(ctx)
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         o.kubeconfig,
		KubernetesAPIQPS:   float32(o.qps),
		KubernetesAPIBurst: o.burst,
		Namespace:          o.namespace,
		IssuerOptions: controller.IssuerOptions{
			ClusterResourceNamespace: o.clusterResourceNamespace,
		},
	})
	if err != nil {
		return fmt.Errorf("building the controller context: %w", err)
	}
	base, err := factory.Build()
	if err != nil {
		return fmt.Errorf("building the base context: %w", err)
	}

	known := controller.Known()
	names := append([]string(nil), controllers...)
	sort.Strings(names)
	log.Info("starting cert-manager controllers", "controllers", names)

	g, gctx := errgroup.WithContext(ctx)
	for _, name := range names {
		construct, ok := known[name]
		if !ok {
			return fmt.Errorf("controller %q is not registered", name)
		}
		iface, err := construct(factory)
		if err != nil {
			return fmt.Errorf("constructing controller %q: %w", name, err)
		}
		g.Go(func() error {
			log.V(logf.InfoLevel).Info("starting controller", "controller", name)
			return iface.Run(o.workers, gctx)
		})
	}

	// The controllers registered their informers while being constructed; start them now.
	base.SharedInformerFactory.Start(gctx.Done())
	base.KubeSharedInformerFactory.Start(gctx.Done())

	err = g.Wait()
	base.KubeSharedInformerFactory.Shutdown()
	base.SharedInformerFactory.Shutdown()
	if err != nil {
		return err
	}
	log.Info("control loops exited")
	return nil
}
