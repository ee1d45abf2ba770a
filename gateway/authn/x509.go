package authn

import (
	"crypto/x509"
	"fmt"
	"net/http"
)

// X509 authenticates TLS client certificates signed by Roots (--client-ca-file):
// the user is the subject's CommonName, the groups its Organizations.
type X509 struct {
	Roots *x509.CertPool
}

var _ Authenticator = X509{}

// Authenticate implements Authenticator.
func (a X509) Authenticate(r *http.Request) (User, bool, error) {
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 || a.Roots == nil {
		return User{}, false, nil
	}
	certs := r.TLS.PeerCertificates
	opts := x509.VerifyOptions{
		Roots:         a.Roots,
		Intermediates: x509.NewCertPool(),
		KeyUsages:     []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	for _, c := range certs[1:] {
		opts.Intermediates.AddCert(c)
	}
	if _, err := certs[0].Verify(opts); err != nil {
		return User{}, false, fmt.Errorf("client certificate: %v: %w", err, ErrUnauthorized)
	}
	s := certs[0].Subject
	if s.CommonName == "" {
		return User{}, false, fmt.Errorf("client certificate without a common name: %w", ErrUnauthorized)
	}
	return User{Name: s.CommonName, Groups: append([]string(nil), s.Organization...)}, true, nil
}
