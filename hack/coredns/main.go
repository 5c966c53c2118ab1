// A CoreDNS with only the plugins the local cluster's DNS needs (no forward:
// names outside the cluster fail here instead of leaving the machine).
package main

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/whoami"
)

func init() {
	// same relative order as CoreDNS's plugin.cfg
	dnsserver.Directives = []string{
		"ready", "health", "errors", "log", "loadbalance", "cache", "hosts", "kubernetes", "whoami",
	}
}

func main() { coremain.Run() }
