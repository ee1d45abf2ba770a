package authn

import (
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
)

// ParsePrivateKey reads the first private key of a PEM file (PKCS#8, PKCS#1 RSA or
// SEC 1 EC), as --service-account-private-key-file and the generated serving key are.
func ParsePrivateKey(data []byte) (crypto.Signer, error) {
	for len(data) > 0 {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		var (
			key any
			err error
		)
		switch b.Type {
		case "PRIVATE KEY":
			key, err = x509.ParsePKCS8PrivateKey(b.Bytes)
		case "RSA PRIVATE KEY":
			key, err = x509.ParsePKCS1PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			key, err = x509.ParseECPrivateKey(b.Bytes)
		default:
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("authn: %s: %w", b.Type, err)
		}
		s, ok := key.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("authn: a %T is no signing key", key)
		}
		return s, nil
	}
	return nil, errors.New("authn: no private key in the PEM data")
}

// ParsePublicKeys reads every public key of a PEM file, as --service-account-key-file
// takes them: public keys, certificates, and private keys (their public halves).
func ParsePublicKeys(data []byte) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	for len(data) > 0 {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		switch b.Type {
		case "PUBLIC KEY":
			k, err := x509.ParsePKIXPublicKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("authn: public key: %w", err)
			}
			keys = append(keys, k)
		case "RSA PUBLIC KEY":
			k, err := x509.ParsePKCS1PublicKey(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("authn: RSA public key: %w", err)
			}
			keys = append(keys, k)
		case "CERTIFICATE":
			c, err := x509.ParseCertificate(b.Bytes)
			if err != nil {
				return nil, fmt.Errorf("authn: certificate: %w", err)
			}
			keys = append(keys, c.PublicKey)
		case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
			s, err := ParsePrivateKey(pem.EncodeToMemory(b))
			if err != nil {
				return nil, err
			}
			keys = append(keys, s.Public())
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("authn: no public key in the PEM data")
	}
	return keys, nil
}
