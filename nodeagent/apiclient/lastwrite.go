package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"k8s.io/client-go/rest"
)

// LastWritePath prefixes the server's path that answers the trace context of an
// object's last write: LastWritePath/{resource}[/{namespace}]/{name}.
const LastWritePath = "/kubeactor/v1/lastwrite"

// LastWrite is the answer of LastWritePath (gateway.LastWrite on the server).
type LastWrite struct {
	Object      string `json:"object"`
	Traceparent string `json:"traceparent,omitempty"` // "" when the server knows none
}

// LastWrite asks the server for the W3C traceparent of the last write of the
// namespaced object resource/namespace/name; "" when it knows none.
func (c *Client) LastWrite(ctx context.Context, resource, namespace, name string) (string, error) {
	if c.cfg == nil {
		return "", fmt.Errorf("last write of %s/%s/%s: apiclient: no config (a wrapped clientset)", resource, namespace, name)
	}
	raw, err := c.cs.CoreV1().RESTClient().Get().AbsPath(LastWritePath, resource, namespace, name).
		SetHeader("Accept", "application/json").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("last write of %s/%s/%s: %w", resource, namespace, name, err)
	}
	var lw LastWrite
	if err := json.Unmarshal(raw, &lw); err != nil {
		return "", fmt.Errorf("last write of %s/%s/%s: %w", resource, namespace, name, err)
	}
	return lw.Traceparent, nil
}

// HTTPClient is an HTTP client with the client's credentials, CA and failover, and
// the server's URL, for the agent's requests outside the API (its spans).
func (c *Client) HTTPClient() (*http.Client, string, error) {
	if c.cfg == nil {
		return http.DefaultClient, "", fmt.Errorf("apiclient: no config (a wrapped clientset)")
	}
	hc, err := rest.HTTPClientFor(c.cfg)
	if err != nil {
		return nil, "", fmt.Errorf("apiclient: http client: %w", err)
	}
	return hc, c.cfg.Host, nil
}
