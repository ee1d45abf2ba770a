package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"net/http/httputil"
	"net/url"
	"strconv"
	"time"
)

// rawClient is a minimal keep-alive HTTP/1.1 client for load generation, in the
// manner of wrk: it writes a prepared request and reads the status line, the
// Content-Length and the body, nothing more. On a 2-core machine the load generator
// shares the CPU with the server; net/http's client costs several times more per
// request, so figures taken with it measure the client as much as the server.
type rawClient struct {
	conn net.Conn
	r    *bufio.Reader
	host string
	buf  bytes.Buffer
}

func dialRaw(base string) (*rawClient, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	return &rawClient{conn: conn, r: bufio.NewReaderSize(conn, 64<<10), host: u.Host}, nil
}

// post sends one POST and returns the response's status code.
func (c *rawClient) post(path string, body []byte) (int, error) {
	c.buf.Reset()
	fmt.Fprintf(&c.buf, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, c.host, len(body))
	c.buf.Write(body)
	if err := c.conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return 0, err
	}
	if _, err := c.conn.Write(c.buf.Bytes()); err != nil {
		return 0, err
	}
	status, err := c.r.ReadSlice('\n')
	if err != nil {
		return 0, err
	}
	if len(status) < 12 {
		return 0, fmt.Errorf("bad status line %q", status)
	}
	code, err := strconv.Atoi(string(status[9:12]))
	if err != nil {
		return 0, fmt.Errorf("bad status line %q", status)
	}
	length := -1
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(line) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(bytes.ToLower(line), []byte("content-length:")); ok {
			length, err = strconv.Atoi(string(bytes.TrimSpace(v)))
			if err != nil {
				return 0, fmt.Errorf("bad content-length %q", line)
			}
		}
	}
	if length < 0 {
		return 0, fmt.Errorf("response without content-length")
	}
	if _, err := c.r.Discard(length); err != nil {
		return 0, err
	}
	return code, nil
}

func (c *rawClient) close() { _ = c.conn.Close() }

// watch sends a GET for a watch and returns a reader of its (de-chunked) body.
func (c *rawClient) watch(path string) (*bufio.Reader, error) {
	if _, err := fmt.Fprintf(c.conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, c.host); err != nil {
		return nil, err
	}
	status, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if !bytes.Contains(status, []byte(" 200 ")) {
		return nil, fmt.Errorf("watch: %q", status)
	}
	chunked := false
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return nil, err
		}
		if len(line) <= 2 {
			break
		}
		if bytes.EqualFold(bytes.TrimSpace(line), []byte("Transfer-Encoding: chunked")) {
			chunked = true
		}
	}
	if !chunked {
		return nil, fmt.Errorf("watch: response is not chunked")
	}
	return bufio.NewReaderSize(httputil.NewChunkedReader(c.r), 64<<10), nil
}
