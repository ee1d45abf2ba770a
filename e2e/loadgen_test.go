package e2e

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
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
	// contentType of the bodies posted; empty means application/json.
	contentType string
	// header is more header lines sent with each request, each ending in "\r\n"
	// (an Authorization header, say).
	header string
}

func dialRaw(base string) (*rawClient, error) {
	return dialRawTLS(base, nil)
}

// dialRawTLS is dialRaw that speaks TLS with tlsConfig (ALPN http/1.1) to an https base.
func dialRawTLS(base string, tlsConfig *tls.Config) (*rawClient, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	var conn net.Conn
	if u.Scheme == "https" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12}
		if tlsConfig != nil {
			cfg = tlsConfig.Clone()
		}
		cfg.NextProtos = []string{"http/1.1"}
		conn, err = tls.Dial("tcp", u.Host, cfg)
	} else {
		conn, err = net.Dial("tcp", u.Host)
	}
	if err != nil {
		return nil, err
	}
	return &rawClient{conn: conn, r: bufio.NewReaderSize(conn, 64<<10), host: u.Host}, nil
}

// post sends one POST and returns the response's status code.
func (c *rawClient) post(path string, body []byte) (int, error) {
	c.buf.Reset()
	ct := c.contentType
	if ct == "" {
		ct = "application/json"
	}
	fmt.Fprintf(&c.buf, "POST %s HTTP/1.1\r\nHost: %s\r\n%sContent-Type: %s\r\nContent-Length: %d\r\n\r\n", path, c.host, c.header, ct, len(body))
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

// watch sends a GET for a watch and returns a reader of its body's lines.
func (c *rawClient) watch(path string) (*chunkLines, error) {
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
	return &chunkLines{r: c.r}, nil
}

// chunkLines reads the lines of a chunked body straight from the connection's buffer.
// (httputil's ChunkedReader under a second bufio.Reader copied every byte once more:
// an eighth of the thousand watchers' CPU in the fan-out benchmark.) A line is
// copied only when it spans two chunks, which the server's large flushes can make.
type chunkLines struct {
	r    *bufio.Reader
	left int    // bytes of the current chunk not read yet
	crlf bool   // the CRLF that ends the last chunk's data is still to be skipped
	line []byte // a line gathered across chunks
}

// ReadSlice returns the next line including delim, as bufio.Reader.ReadSlice does: it
// is valid until the next read.
func (c *chunkLines) ReadSlice(delim byte) ([]byte, error) {
	c.line = c.line[:0]
	for {
		if c.crlf {
			if _, err := c.r.Discard(2); err != nil {
				return nil, err
			}
			c.crlf = false
		}
		if c.left == 0 {
			head, err := c.r.ReadSlice('\n')
			if err != nil {
				return nil, err
			}
			n, err := strconv.ParseInt(string(bytes.TrimSpace(head)), 16, 64)
			if err != nil {
				return nil, fmt.Errorf("chunk size %q: %w", head, err)
			}
			if n == 0 {
				return nil, io.EOF
			}
			c.left = int(n)
		}
		if c.r.Buffered() == 0 {
			if _, err := c.r.Peek(1); err != nil {
				return nil, err
			}
		}
		avail, _ := c.r.Peek(min(c.left, c.r.Buffered()))
		part := avail
		i := bytes.IndexByte(avail, delim)
		if i >= 0 {
			part = avail[:i+1]
		}
		_, _ = c.r.Discard(len(part)) // buffered: part stays valid until the next read
		c.left -= len(part)
		c.crlf = c.left == 0
		switch {
		case i >= 0 && len(c.line) == 0:
			return part, nil
		case i >= 0:
			c.line = append(c.line, part...)
			return c.line, nil
		default:
			c.line = append(c.line, part...)
		}
	}
}
