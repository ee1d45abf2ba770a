package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestServerValidateSecurity(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("thomas,thomas,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		change  func(*Server)
		wantErr string
		check   func(*Server) string
	}{
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := validServer()
			tt.change(&s)
			err := s.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("Validate = %v, want an error about %s", err, tt.wantErr)
			}
			if tt.check != nil {
				if msg := tt.check(&s); msg != "" {
					t.Error(msg)
				}
			}
		})
	}
}
