package pki

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"time"
)

// File names in --cert-dir.
const (
	CACertFile      = "ca.crt"
	CAKeyFile       = "ca.key"
	ServingCertFile = "apiserver.crt"
	ServingKeyFile  = "apiserver.key"
)

// Dir is a certificate directory.
type Dir string

// Path is the path of one of the directory's files.
func (d Dir) Path(name string) string { return filepath.Join(string(d), name) }

// EnsureCA loads the directory's CA, making it on first use.
func (d Dir) EnsureCA(now time.Time) (*CA, error) {
	certPEM, errC := os.ReadFile(d.Path(CACertFile))
	keyPEM, errK := os.ReadFile(d.Path(CAKeyFile))
	if errC == nil && errK == nil {
		return LoadCA(certPEM, keyPEM)
	}
	if !errors.Is(errC, fs.ErrNotExist) && errC != nil {
		return nil, fmt.Errorf("pki: %w", errC)
	}
	if !errors.Is(errK, fs.ErrNotExist) && errK != nil {
		return nil, fmt.Errorf("pki: %w", errK)
	}
	ca, keyPEM, err := NewCA(fmt.Sprintf("kubeactor-ca@%d", now.Unix()), now)
	if err != nil {
		return nil, err
	}
	if err := d.write(CAKeyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}
	return ca, d.write(CACertFile, ca.CertPEM, 0o644)
}

// EnsureServing returns the paths of the serving certificate and key, issuing them
// with ca on first use for hosts and ips; an existing pair is reused as it is.
func (d Dir) EnsureServing(ca *CA, hosts []string, ips []net.IP, now time.Time) (certFile, keyFile string, err error) {
	certFile, keyFile = d.Path(ServingCertFile), d.Path(ServingKeyFile)
	_, errC := os.Stat(certFile)
	_, errK := os.Stat(keyFile)
	if errC == nil && errK == nil {
		return certFile, keyFile, nil
	}
	cn := "kubeactor"
	if len(hosts) > 0 {
		cn = hosts[0]
	}
	certPEM, keyPEM, err := ca.Serving(cn, hosts, ips, now)
	if err != nil {
		return "", "", err
	}
	if err := d.write(ServingKeyFile, keyPEM, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, d.write(ServingCertFile, certPEM, 0o644)
}

// write writes one file atomically (a temporary file renamed).
func (d Dir) write(name string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(string(d), 0o700); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	tmp, err := os.CreateTemp(string(d), name+".tmp*")
	if err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return fmt.Errorf("pki: %w", err)
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("pki: write %s: %w", name, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("pki: write %s: %w", name, err)
	}
	if err := os.Rename(tmp.Name(), d.Path(name)); err != nil {
		return fmt.Errorf("pki: %w", err)
	}
	return nil
}
