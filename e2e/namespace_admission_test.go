package e2e

import (
	"strings"
	"testing"
)

const nsAdmissionPod = `apiVersion: v1
kind: Pod
metadata:
  name: probe
spec:
  containers:
  - name: app
    image: kubeactor/busybox:latest
    command: ["sleep", "3600"]
`

// TestNamespaceAdmissionWithKubectl (issue 14): through the installed kubectl, with
// AlwaysAdmit as the control (the pod is stored, no namespace is made), a
// server with --admission-control=NamespaceExists refuses a create in a namespace
// that does not exist with v1.0's 404 (`namespaces "x" not found`) and creates
// nothing, while creates in existing namespaces pass; with NamespaceAutoProvision the
// create succeeds and the namespace appears, Active, holding the object.
func TestNamespaceAdmissionWithKubectl(t *testing.T) {
	tests := []struct {
		plugins string
		// wantErr is what kubectl prints for the create in the missing namespace ("": it succeeds).
		wantErr []string
		// provisions: the namespace appears with the create (else it stays missing).
		provisions bool
	}{
		// The control: without either plugin the pod is stored and no namespace made.
		{plugins: "AlwaysAdmit"},
		{plugins: "NamespaceExists", wantErr: []string{"(NotFound)", `namespaces "nsadm-missing" not found`}},
		{plugins: "NamespaceLifecycle,NamespaceExists,LimitRanger", wantErr: []string{"(NotFound)", `namespaces "nsadm-missing" not found`}},
		{plugins: "NamespaceAutoProvision", provisions: true},
		{plugins: "NamespaceAutoProvision,LimitRanger,SecurityContextDeny", provisions: true},
	}
	for _, tc := range tests {
		t.Run(tc.plugins, func(t *testing.T) {
			s := StartServer(t, "", "--admission-control", tc.plugins, "--dns-port", "0")
			const ns = "nsadm-missing"
			r := s.Kubectl(nsAdmissionPod, "create", "-f", "-", "--namespace", ns)
			getNS := s.Kubectl("", "get", "namespace", ns, "-o", "jsonpath={.status.phase}")
			getPod := s.Kubectl("", "get", "pod", "probe", "--namespace", ns, "-o", "jsonpath={.metadata.namespace}")
			if len(tc.wantErr) > 0 {
				if r.Err == nil {
					t.Fatalf("create in a missing namespace succeeded: %s", r.Stdout)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(r.Stderr, w) {
						t.Errorf("kubectl create: stderr %q lacks %q", r.Stderr, w)
					}
				}
				if getNS.Err == nil || !strings.Contains(getNS.Stderr, "NotFound") {
					t.Errorf("the namespace exists after a refused create: %q %q", getNS.Stdout, getNS.Stderr)
				}
				if getPod.Err == nil {
					t.Errorf("the refused pod was stored: %q", getPod.Stdout)
				}
				// Existing namespaces are admitted: default, and the missing one once made.
				s.MustKubectl(t, nsAdmissionPod, "create", "-f", "-", "--namespace", "default")
				s.MustKubectl(t, "", "create", "namespace", ns)
				s.MustKubectl(t, nsAdmissionPod, "create", "-f", "-", "--namespace", ns)
				if got := s.MustKubectl(t, "", "get", "pod", "probe", "--namespace", ns, "-o", "jsonpath={.metadata.namespace}"); got != ns {
					t.Errorf("pod's namespace %q, want %q", got, ns)
				}
				return
			}
			if r.Err != nil {
				t.Fatalf("create with %s: %v\n%s", tc.plugins, r.Err, r.Stderr)
			}
			if getPod.Err != nil || getPod.Stdout != ns {
				t.Errorf("the pod in namespace %s: %q, %v %s", ns, getPod.Stdout, getPod.Err, getPod.Stderr)
			}
			if !tc.provisions {
				if getNS.Err == nil || !strings.Contains(getNS.Stderr, "NotFound") {
					t.Errorf("%s made the namespace: %q %q", tc.plugins, getNS.Stdout, getNS.Stderr)
				}
				return
			}
			if getNS.Err != nil || getNS.Stdout != "Active" {
				t.Errorf("the provisioned namespace: phase %q, %v %s", getNS.Stdout, getNS.Err, getNS.Stderr)
			}
			list := s.MustKubectl(t, "", "get", "namespaces", "-o", "name")
			if !strings.Contains(list, "namespace/"+ns) {
				t.Errorf("kubectl get namespaces lacks %s:\n%s", ns, list)
			}
			// A second create in it is an ordinary create (AlreadyExists for the same name).
			if r := s.Kubectl(nsAdmissionPod, "create", "-f", "-", "--namespace", ns); r.Err == nil || !strings.Contains(r.Stderr, "AlreadyExists") {
				t.Errorf("second create of the same pod: %v %s", r.Err, r.Stderr)
			}
		})
	}
}
