package streamclient

import (
	"fmt"
	"net/http"
	"net/url"

	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport/spdy"
)

// NewDialer upgrades method u to SPDY with cfg's credentials and TLS settings.
func NewDialer(cfg *rest.Config, method string, u *url.URL) (httpstream.Dialer, error) {
	rt, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("spdy transport: %w", err)
	}
	return spdy.NewDialer(upgrader, &http.Client{Transport: rt}, method, u), nil
}
