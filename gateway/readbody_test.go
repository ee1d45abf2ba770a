package gateway

import (
	"io"
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestReadBody(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		length  int64 // Content-Length; -1 for unknown (chunked)
		max     int64
		want    string
		tooBig  bool
		invalid bool
	}{
		{name: "known length", body: `{"kind":"Pod"}`, length: 14, max: 100, want: `{"kind":"Pod"}`},
		{name: "unknown length", body: `{"kind":"Pod"}`, length: -1, max: 100, want: `{"kind":"Pod"}`},
		{name: "exactly the limit", body: "0123456789", length: 10, max: 10, want: "0123456789"},
		{name: "known length over the limit", body: "0123456789x", length: 11, max: 10, tooBig: true},
		{name: "unknown length over the limit", body: "0123456789x", length: -1, max: 10, tooBig: true},
		{name: "body shorter than its length", body: "012", length: 5, max: 10, invalid: true},
		{name: "body longer than its length", body: "01234", length: 3, max: 10, invalid: true},
		{name: "empty", body: "", length: 0, max: 10, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &http.Request{Body: io.NopCloser(strings.NewReader(tt.body)), ContentLength: tt.length}
			got, err := readBody(r, tt.max)
			switch {
			case tt.tooBig:
				if !apierrors.IsRequestEntityTooLargeError(err) {
					t.Fatalf("err = %v, want 413", err)
				}
			case tt.invalid:
				if !apierrors.IsBadRequest(err) {
					t.Fatalf("err = %v, want 400", err)
				}
			case err != nil:
				t.Fatalf("err = %v", err)
			case string(got) != tt.want:
				t.Fatalf("body = %q, want %q", got, tt.want)
			}
		})
	}
}
