package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestServerValidateSecurity(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("thomas,thomas,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runServerCases(t, []serverCase{
		{name: "defaults", change: func(*Server) {}, check: func(s *Server) string {
			if s.CertDir != filepath.Join(s.DataDir, "pki") || s.SecureAddress() != "0.0.0.0:0" {
				return "cert dir " + s.CertDir + ", address " + s.SecureAddress()
			}
			return ""
		}},
		{name: "files are read", change: func(s *Server) { s.TokenAuthFile = tokens }, check: func(s *Server) string {
			if string(s.TokenAuth) != "thomas,thomas,1\n" {
				return "token file not read"
			}
			return ""
		}},
		{name: "missing file", change: func(s *Server) { s.BasicAuthFile = filepath.Join(dir, "nope") }, wantErr: "--basic-auth-file"},
		{name: "secure port off", change: func(s *Server) { s.SecurePort = -1 }},
		{name: "secure port too small", change: func(s *Server) { s.SecurePort = -2 }, wantErr: "--secure-port"},
		{name: "bad bind address", change: func(s *Server) { s.BindAddress = "host" }, wantErr: "--bind-address"},
		{name: "cert without key", change: func(s *Server) { s.TLSCertFile = tokens }, wantErr: "--tls-private-key-file"},
		{name: "ABAC without policy", change: func(s *Server) { s.AuthorizationMode = "ABAC" }, wantErr: "--authorization-policy-file"},
		{name: "policy without ABAC", change: func(s *Server) { s.AuthorizationPolicyFile = tokens }, wantErr: "ABAC"},
		{name: "unknown mode", change: func(s *Server) { s.AuthorizationMode = "RBAC" }, wantErr: "--authorization-mode"},
	})
}
