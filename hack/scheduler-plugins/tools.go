//go:build tools

// Package tools pins the scheduler-plugins scheduler (built by hack/build/build_scheduler_plugins.py).
package tools

import _ "sigs.k8s.io/scheduler-plugins/cmd/scheduler"
