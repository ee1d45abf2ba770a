package e2e

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The prefix of the secure create benchmark's namespaces, and the admission chain it runs under:
// the book's full chain (Kubernetes 1.0's recommended --admission-control).
const (
	secureBenchNS    = "bench-secure"
	bookAdmission    = "NamespaceLifecycle,LimitRanger,SecurityContextDeny,ServiceAccount,ResourceQuota"
	secureBenchPods  = 10000 // per round
	secureBenchConns = 64
)

// randomSecret is a distinctive random string (prefix + 32 hex digits), for values
// that must be found again (or must not be found) in logs and answers.
func randomSecret(tb testing.TB, prefix string) string {
	tb.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	return prefix + hex.EncodeToString(b[:])
}

// BenchmarkSecureCreates: durable pod creates per second over TLS with a bearer token
// (--token-auth-file), ABAC and the book's full admission chain with a ResourceQuota
// in the namespace, next to the insecure port of the same server in the same run
// (same chain and quota there, without authentication and authorization). The rounds
// alternate (insecure, secure, insecure, secure; KUBEACTOR_BENCH_ROUNDS pairs) so
// that a noisy machine weighs on both alike, each into a fresh namespace; ratio is
// the secure rate over the insecure one. Each sub-benchmark names the client: raw
// HTTP/1.1 keep-alive (64 connections, the create benchmarks' lean load generator,
// over TLS on the secure port); Go's net/http speaking HTTP/2 over TLS as client-go
// does (64 streams on one connection; HTTP/1.1 on the insecure port); and net/http
// with HTTP/1.1 keep-alive on both ports.
func BenchmarkSecureCreates(b *testing.B) {
	dir := b.TempDir()
	token := randomSecret(b, "bench-token-")
	tokens := filepath.Join(dir, "tokens.csv")
	policy := filepath.Join(dir, "policy.jsonl")
	if err := os.WriteFile(tokens, []byte(token+",bench,100\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(policy, []byte(`{"user":"bench"}`+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	certDir := filepath.Join(dir, "pki")
	s := StartServer(b, "", "--cert-dir", certDir, "--token-auth-file", tokens,
		"--authorization-mode", "ABAC", "--authorization-policy-file", policy,
		"--admission-control", bookAdmission)
	if s.SecureURL == "" {
		b.Fatal("no secure address in the startup log")
	}
	pem, err := os.ReadFile(filepath.Join(certDir, "ca.crt"))
	if err != nil {
		b.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		b.Fatal("no certificate in ca.crt")
	}
	tlsConfig := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}

	// Each round creates into a namespace of its own, made beforehand: the quota
	// recounts its namespace's pods, so rounds into one namespace would each find more
	// pods than the round before, and alternation alone would favour the first port.
	// KUBEACTOR_BENCH_ROUNDS pairs of rounds (2 by default).
	pairs := 2
	if n, err := strconv.Atoi(os.Getenv("KUBEACTOR_BENCH_ROUNDS")); err == nil && n > 0 {
		pairs = n
	}
	var rounds []struct{ secure bool }
	for range pairs {
		rounds = append(rounds, struct{ secure bool }{false}, struct{ secure bool }{true})
	}
	clients := []struct {
		name     string
		lean, h2 bool
	}{
		{"client=raw-http1.1-keepalive", true, false},
		{"client=nethttp-h2-over-tls", false, true},
		{"client=nethttp-http1.1-keepalive", false, false},
	}
	var namespaces []string
	for ci := range clients {
		for ri := range rounds {
			namespaces = append(namespaces, fmt.Sprintf("%s-%d-%d", secureBenchNS, ci, ri))
		}
	}
	prepareSecureBench(b, s, namespaces)

	for ci, c := range clients {
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var in, sec float64
				var inLat, secLat []time.Duration
				var perRound []string
				protos := map[string]bool{}
				for ri, r := range rounds {
					t := podTarget{base: s.URL, namespace: namespaces[ci*len(rounds)+ri], lean: c.lean, h2: c.h2}
					port := "insecure"
					if r.secure {
						t.base, t.token, t.tls, port = s.SecureURL, token, tlsConfig, "secure"
					}
					rate, lat, proto := createPodsAt(b, t, secureBenchPods, secureBenchConns)
					perRound = append(perRound, fmt.Sprintf("%s %.0f/s", port, rate))
					protos[port+"="+proto] = true
					if r.secure {
						sec += rate / float64(pairs)
						secLat = append(secLat, lat...)
					} else {
						in += rate / float64(pairs)
						inLat = append(inLat, lat...)
					}
				}
				for _, l := range [][]time.Duration{inLat, secLat} {
					sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
				}
				b.Logf("rounds: %s; protocols: %v", strings.Join(perRound, ", "), protos)
				b.ReportMetric(in, "insecure-creates/s")
				b.ReportMetric(sec, "secure-creates/s")
				b.ReportMetric(sec/in, "ratio")
				b.ReportMetric(float64(percentile(inLat, 0.99).Microseconds())/1000, "insecure-p99-ms")
				b.ReportMetric(float64(percentile(secLat, 0.99).Microseconds())/1000, "secure-p99-ms")
			}
		})
	}
}

// prepareSecureBench makes the benchmark's namespaces, each with a quota that does
// not refuse, and waits until every quota counts and every namespace's default
// service account has its token (the ServiceAccount plugin refuses pods until then).
func prepareSecureBench(b *testing.B, s *Server, namespaces []string) {
	b.Helper()
	var manifest strings.Builder
	for _, ns := range namespaces {
		fmt.Fprintf(&manifest, `apiVersion: v1
kind: Namespace
metadata:
  name: %[1]s
---
apiVersion: v1
kind: ResourceQuota
metadata:
  name: bench-quota
  namespace: %[1]s
spec:
  hard:
    pods: "1000000"
---
`, ns)
	}
	s.MustKubectl(b, manifest.String(), "apply", "-f", "-")
	for _, ns := range namespaces {
		Eventually(b, 60*time.Second, ns+": the quota counts and the default account has its token", func() error {
			used := s.Kubectl("", "-n", ns, "get", "resourcequota", "bench-quota", "-o", "jsonpath={.status.used.pods}")
			if used.Err != nil || used.Stdout == "" {
				return fmt.Errorf("quota not counted yet: %v %s", used.Err, used.Stderr)
			}
			sa := s.Kubectl("", "-n", ns, "get", "serviceaccount", "default", "-o", "jsonpath={.secrets[0].name}")
			if sa.Err != nil || strings.TrimSpace(sa.Stdout) == "" {
				return fmt.Errorf("no token secret yet: %v %s", sa.Err, sa.Stderr)
			}
			return nil
		})
	}
}
