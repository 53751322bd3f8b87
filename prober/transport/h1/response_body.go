package h1

import (
	"bufio"
	"bytes"
	"io"

	"github.com/loadprobe/loadprobe/prober/transport/internal/wire"
)

// Bodies: read to their end and dropped, framed as net/http frames them.

// discardN reads n body bytes and drops them; whole is false when n is over
// the body limit and the connection must be closed instead of read on.
func (fc *conn) discardN(n int64) (whole bool, err error) {
	if n > wire.MaxBodyBytes {
		return false, unexpectedEOF(fc.discard(wire.MaxBodyBytes))
	}
	return true, unexpectedEOF(fc.discard(n))
}

// discard drops n bytes: from the read buffer, then straight from the
// connection into a scratch buffer, so a large body costs few reads.
func (fc *conn) discard(n int64) error {
	br := fc.br
	if b := int64(br.Buffered()); b >= n {
		fc.skip(int(n))
		return nil
	} else if b > 0 {
		fc.skip(int(b))
		n -= b
	}
	if n <= int64(br.Size()) {
		b, err := br.Peek(int(n))
		fc.skip(len(b))
		return err
	}
	bp := wire.Scratch.Get().(*[]byte)
	defer wire.Scratch.Put(bp)
	buf := *bp
	for n > 0 {
		m, err := fc.nc.Read(buf[:min(n, int64(len(buf)))])
		fc.keep.bodyPiece(buf[:m])
		n -= int64(m)
		if err != nil && n > 0 {
			return err
		}
	}
	return nil
}

// skip drops n buffered body bytes, which a capture keeps.
func (fc *conn) skip(n int) {
	if fc.keep != nil {
		b, _ := fc.br.Peek(n)
		fc.keep.bodyPiece(b)
	}
	fc.br.Discard(n)
}

// discardToEOF drops a body delimited by the close of the connection.
func (fc *conn) discardToEOF() (whole bool, err error) {
	br := fc.br
	var total int64
	for total <= wire.MaxBodyBytes {
		n := br.Buffered()
		if n == 0 {
			if _, err := br.Peek(1); err != nil {
				if err == io.EOF {
					return true, nil
				}
				return false, err
			}
			n = br.Buffered()
		}
		n = int(min(int64(n), wire.MaxBodyBytes+1-total))
		fc.skip(n)
		total += int64(n)
	}
	return false, nil
}

// discardChunked drops a chunked body and its trailers, as net/http's
// chunked reader reads them.
func (fc *conn) discardChunked() (whole bool, err error) {
	var total uint64
	var excess int64
	for {
		size, overhead, err := fc.chunkSize()
		if err != nil {
			return false, err
		}
		// At most 16 bytes of overhead per chunk plus twice its data, as
		// net/http allows: a sender cannot make the body mostly framing.
		excess = max(excess+int64(overhead)-16-2*int64(min(size, 1<<40)), 0)
		if excess > 16<<10 {
			return false, errMalformedChunk
		}
		if size == 0 {
			break
		}
		if size > wire.MaxBodyBytes-total {
			return false, unexpectedEOF(fc.discard(int64(wire.MaxBodyBytes - total)))
		}
		if err := fc.discard(int64(size)); err != nil {
			return false, unexpectedEOF(err)
		}
		total += size
		crlf, err := fc.br.Peek(2)
		if err != nil {
			return false, unexpectedEOF(err)
		}
		if string(crlf) != "\r\n" {
			return false, errMalformedChunk
		}
		fc.br.Discard(2)
	}
	return true, fc.readTrailers()
}

// chunkSize reads a chunk-size line: CRLF-terminated, shorter than
// maxChunkLine, extensions dropped. overhead is its length with the CRLF
// that ends the chunk's data.
func (fc *conn) chunkSize() (size, overhead uint64, err error) {
	line, err := fc.br.ReadSlice('\n')
	switch err {
	case nil:
	case bufio.ErrBufferFull:
		return 0, 0, errMalformedChunk
	default:
		return 0, 0, unexpectedEOF(err)
	}
	if cr := bytes.IndexByte(line, '\r'); cr < 0 || cr != len(line)-2 {
		return 0, 0, errMalformedChunk // a bare LF, or a CR inside
	}
	line = line[:len(line)-2]
	if len(line) >= maxChunkLine {
		return 0, 0, errMalformedChunk
	}
	overhead = uint64(len(line)) + 2
	line, _, _ = bytes.Cut(trimRightOWS(line), []byte(";"))
	size, ok := parseHex(line)
	if !ok {
		return 0, 0, errMalformedChunk
	}
	return size, overhead, nil
}

// readTrailers reads the trailers after the last chunk, up to the empty
// line, as net/http does: an end of the stream there is an error of its
// own, and trailers must end with CRLF CRLF within the Transport's read
// buffer.
func (fc *conn) readTrailers() error {
	b, err := fc.br.Peek(2)
	switch {
	case string(b) == "\r\n":
		fc.br.Discard(2)
		return nil
	case len(b) < 2:
		return errTrailerEOF
	case err != nil:
		return err
	}
	// Look at what is buffered before waiting for more, so that a short
	// trailer is read as soon as it has come.
	for {
		b, _ := fc.br.Peek(fc.br.Buffered())
		if bytes.Contains(b, []byte("\r\n\r\n")) {
			break
		}
		if len(b) >= transportReadBuffer {
			return errMalformedChunk // a suspiciously long trailer
		}
		if _, err := fc.br.Peek(len(b) + 1); err != nil {
			return errMalformedChunk
		}
	}
	budget := wire.MaxHeaderBytes
	var trailers head
	if err := fc.readHeaders(&budget, &trailers, nil); err != nil {
		if err == io.ErrUnexpectedEOF {
			return errTrailerEOF
		}
		return err
	}
	return nil
}

// unexpectedEOF turns the end of the stream inside a response into the error
// that says so.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// parseHex parses a chunk size: one to sixteen hex digits.
func parseHex(b []byte) (uint64, bool) {
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		n = n<<4 | uint64(c)
	}
	return n, true
}
