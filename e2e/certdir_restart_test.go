package e2e

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCertDirReusedAfterRestart (issue 14): the CA and serving certificate that the
// server makes in --cert-dir on first start are the ones it uses after a restart
// (same files, same fingerprints, the same certificate served on the secure port),
// and the admin kubeconfig `kubeactor up` wrote at the first start still works with
// kubectl after the restart (its CA verifies the server, its client certificate is
// accepted).
func TestCertDirReusedAfterRestart(t *testing.T) {
	dataDir := t.TempDir()
	certDir := filepath.Join(t.TempDir(), "certs")
	_, port, err := net.SplitHostPort(freeLoopbackAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--cert-dir", certDir, "--secure-port", port, "--simulate", "1"}

	type state struct {
		files  map[string]string // file name -> sha256 of its PEM's DER (certificates) or bytes (keys)
		served string            // sha256 of the certificate the secure port serves
	}
	look := func(s *Server) state {
		t.Helper()
		st := state{files: map[string]string{}}
		for _, name := range []string{"ca.crt", "ca.key", "apiserver.crt", "apiserver.key"} {
			b, err := os.ReadFile(filepath.Join(certDir, name))
			if err != nil {
				t.Fatalf("%s in --cert-dir: %v", name, err)
			}
			block, _ := pem.Decode(b)
			if block == nil {
				t.Fatalf("%s: no PEM", name)
			}
			sum := sha256.Sum256(block.Bytes)
			st.files[name] = hex.EncodeToString(sum[:])
		}
		conn, err := tls.Dial("tcp", strings.TrimPrefix(s.SecureURL, "https://"), &tls.Config{InsecureSkipVerify: true}) // only the served certificate is read
		if err != nil {
			t.Fatalf("dial the secure port: %v", err)
		}
		defer conn.Close()
		sum := sha256.Sum256(conn.ConnectionState().PeerCertificates[0].Raw)
		st.served = hex.EncodeToString(sum[:])
		return st
	}
	getNodes := func(s *Server, kubeconfig string) error {
		r := s.runClient("kubectl", "", []string{"--kubeconfig", kubeconfig, "get", "nodes"})
		if r.Err != nil || !strings.Contains(r.Stdout, "NAME") {
			return fmt.Errorf("kubectl --kubeconfig %s get nodes: %v\n%s%s", kubeconfig, r.Err, r.Stdout, r.Stderr)
		}
		return nil
	}

	first := StartUp(t, dataDir, args...)
	if first.SecureURL == "" {
		t.Fatal("no secure address in the startup log")
	}
	kc := filepath.Join(certDir, "admin.kubeconfig")
	Eventually(t, 30*time.Second, "the admin kubeconfig written in --cert-dir", func() error {
		_, err := os.Stat(kc)
		return err
	})
	kubeconfig, err := os.ReadFile(kc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kubeconfig), first.SecureURL) {
		t.Fatalf("the admin kubeconfig does not name the secure port %s:\n%s", first.SecureURL, kubeconfig)
	}
	firstKubeconfig := writeFile(t, t.TempDir(), "first.kubeconfig", string(kubeconfig))
	if err := getNodes(first, firstKubeconfig); err != nil {
		t.Fatal(err)
	}
	before := look(first)
	if before.served != before.files["apiserver.crt"] {
		t.Fatalf("the secure port serves %s, not apiserver.crt %s", before.served, before.files["apiserver.crt"])
	}
	first.Stop()

	second := StartUp(t, dataDir, args...)
	if second.SecureURL != first.SecureURL {
		t.Fatalf("secure address %s after the restart, %s before", second.SecureURL, first.SecureURL)
	}
	after := look(second)
	for name, sum := range before.files {
		if after.files[name] != sum {
			t.Errorf("%s changed across the restart: %s, was %s", name, after.files[name], sum)
		}
	}
	if after.served != before.served {
		t.Errorf("the secure port serves another certificate after the restart: %s, was %s", after.served, before.served)
	}
	// The first start's kubeconfig, unchanged, still works.
	Eventually(t, 30*time.Second, "kubectl with the first start's kubeconfig", func() error { return getNodes(second, firstKubeconfig) })
}
