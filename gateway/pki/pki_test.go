package pki

import (
	"crypto/x509"
	"net"
	"os"
	"testing"
	"time"
)

func TestDirMakesAndReuses(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	d := Dir(t.TempDir() + "/pki")
	ca, err := d.EnsureCA(now)
	if err != nil {
		t.Fatal(err)
	}
	certFile, _, err := d.EnsureServing(ca, []string{"localhost", "kubernetes"}, []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.254.0.1")}, now)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(certFile)
	if fi, err := os.Stat(d.Path(CAKeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("ca key mode: %v %v", fi.Mode(), err)
	}

	ca2, err := d.EnsureCA(now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !ca2.Cert.Equal(ca.Cert) {
		t.Fatal("the CA was made again")
	}
	if _, _, err := d.EnsureServing(ca2, []string{"other"}, nil, now); err != nil {
		t.Fatal(err)
	}
	again, _ := os.ReadFile(certFile)
	if string(again) != string(first) {
		t.Fatal("the serving certificate was made again")
	}

	serving, err := ParseCert(first)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.Cert)
	for _, tt := range []struct{ name, host string }{{"name", "kubernetes"}, {"loopback", "127.0.0.1"}, {"service ip", "10.254.0.1"}} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: tt.host, CurrentTime: now}); err != nil {
				t.Fatal(err)
			}
		})
	}

	certPEM, _, err := ca.Client("admin", []string{"system:masters"}, now)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := ParseCert(certPEM)
	if _, err := c.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatal(err)
	}
	if c.Subject.CommonName != "admin" || c.Subject.Organization[0] != "system:masters" {
		t.Fatalf("subject %v", c.Subject)
	}
}
