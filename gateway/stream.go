package gateway

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"
)

// streamSink is where a watch stream's bytes go. There are two: the HTTP response,
// and for HTTP/1.1 the hijacked connection with the chunks framed here. net/http
// writes a chunk of more than its 4 KiB buffer with up to three syscalls (size line,
// data, CRLF); with a thousand watchers those syscalls were half the server's CPU, so
// the hijacked sink writes each flush, framing included, with one.
type streamSink interface {
	Write(p []byte) (int, error)
	WriteString(s string) (int, error)
	Flush() error
	Close() error
}

// responseSink streams through the http.ResponseWriter.
type responseSink struct {
	w    *bufio.Writer
	resp *echo.Response
}

func (r *responseSink) Write(p []byte) (int, error)       { return r.w.Write(p) }
func (r *responseSink) WriteString(s string) (int, error) { return r.w.WriteString(s) }
func (r *responseSink) Close() error                      { return r.Flush() }

func (r *responseSink) Flush() error {
	if err := r.w.Flush(); err != nil {
		return err
	}
	r.resp.Flush()
	return nil
}

// chunkedConn streams on a hijacked HTTP/1.1 connection in chunked encoding. buf
// starts with room for the chunk-size line, so a flush is one write and one copy.
type chunkedConn struct {
	conn net.Conn
	buf  []byte
}

// chunkHeadRoom is the space kept at the front of buf for "<hex size>\r\n".
const chunkHeadRoom = 18

// chunkFlushAt is the size at which a chunk is written without waiting for Flush.
const chunkFlushAt = 256 << 10

func (cc *chunkedConn) Write(p []byte) (int, error) {
	cc.buf = append(cc.buf, p...)
	if len(cc.buf) >= chunkFlushAt {
		return len(p), cc.Flush()
	}
	return len(p), nil
}

func (cc *chunkedConn) WriteString(s string) (int, error) {
	cc.buf = append(cc.buf, s...)
	return len(s), nil
}

func (cc *chunkedConn) Flush() error {
	n := len(cc.buf) - chunkHeadRoom
	if n == 0 {
		return nil
	}
	var size [chunkHeadRoom]byte
	head := strconv.AppendInt(size[:0], int64(n), 16)
	head = append(head, '\r', '\n')
	start := chunkHeadRoom - len(head)
	copy(cc.buf[start:], head)
	cc.buf = append(cc.buf, '\r', '\n')
	_, err := cc.conn.Write(cc.buf[start:])
	cc.buf = cc.buf[:chunkHeadRoom]
	return err
}

// Close ends the body with the last chunk and closes the connection.
func (cc *chunkedConn) Close() error {
	if err := cc.Flush(); err != nil {
		_ = cc.conn.Close()
		return err
	}
	_, _ = cc.conn.Write([]byte("0\r\n\r\n"))
	return cc.conn.Close()
}

// openStream starts a 200 streaming response with the headers already set on c's
// response. For HTTP/1.1 it hijacks the connection (and cancel is called when the
// client goes away, since net/http no longer watches it); otherwise it streams through
// the ResponseWriter.
func openStream(c echo.Context, cancel context.CancelFunc) streamSink {
	resp := c.Response()
	if r := c.Request(); r.ProtoMajor == 1 && r.ProtoMinor == 1 {
		if conn, rw, err := http.NewResponseController(resp.Writer).Hijack(); err == nil {
			resp.Status, resp.Committed = http.StatusOK, true
			h := resp.Header()
			h.Set("Date", time.Now().UTC().Format(http.TimeFormat))
			h.Set("Transfer-Encoding", "chunked")
			var head bytes.Buffer
			head.WriteString("HTTP/1.1 200 OK\r\n")
			_ = h.Write(&head)
			head.WriteString("\r\n")
			if _, err := conn.Write(head.Bytes()); err != nil {
				cancel()
			}
			go func() { // anything the client sends, or its leaving, ends the watch
				_, _ = rw.Reader.ReadByte()
				cancel()
			}()
			return &chunkedConn{conn: conn, buf: make([]byte, chunkHeadRoom, 64<<10)}
		}
	}
	resp.WriteHeader(http.StatusOK)
	return &responseSink{w: bufio.NewWriterSize(resp, 32<<10), resp: resp}
}
