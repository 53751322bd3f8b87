package h1

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
)

// Status lines and headers, read as net/textproto and net/http read them.

// readHeaders reads header lines up to the empty line into h, as
// net/textproto reads them: continuation lines joined, each line trimmed;
// keep, when not nil, keeps them as they came.
func (fc *conn) readHeaders(budget *int, h *head, keep *kept) error {
	for first := true; ; first = false {
		line, truncated, err := fc.readLine(budget)
		if err != nil {
			return unexpectedEOF(err)
		}
		if len(line) == 0 && !truncated {
			h.endHeader()
			return nil
		}
		keep.headerPiece(line, truncated)
		how := newHeader
		if line[0] == ' ' || line[0] == '\t' {
			if first {
				return errMalformedHeader
			}
			how = continuation
		}
		if !truncated {
			line = trimOWS(line)
		} else {
			line = trimLeftOWS(line)
		}
		if err := h.header(line, how); err != nil {
			return err
		}
		for truncated {
			if line, truncated, err = fc.readLine(budget); err != nil {
				return unexpectedEOF(err)
			}
			keep.headerPiece(line, truncated)
			if !truncated {
				line = trimRightOWS(line)
			}
			if err := h.header(line, rest); err != nil {
				return err
			}
		}
	}
}

// header takes one header line or a piece of one.
func (h *head) header(line []byte, how int) error {
	if how != newHeader {
		if err := checkValue(line); err != nil {
			return err
		}
		if how == continuation {
			h.appendValue([]byte(" "))
		}
		h.appendValue(line)
		return nil
	}
	h.endHeader()
	// The name runs to the first colon, and only token bytes and spaces
	// may come before it (as net/textproto accepts): one pass finds both.
	colon := 0
	for colon < len(line) && headerNameByte[line[colon]] {
		colon++
	}
	if colon == 0 || colon == len(line) || line[colon] != ':' {
		return errMalformedHeader
	}
	name, value := line[:colon], line[colon+1:]
	if err := checkValue(value); err != nil {
		return err
	}
	h.pending = headerKind(name)
	h.valueLen, h.valueLong = 0, false
	h.appendValue(value)
	return nil
}

func (h *head) appendValue(b []byte) {
	if h.pending == hdrOther {
		return
	}
	n := copy(h.value[h.valueLen:], b)
	h.valueLen += n
	h.valueLong = h.valueLong || n < len(b)
}

// endHeader notes what the header just read says, its value complete.
func (h *head) endHeader() {
	if h.pending == hdrOther {
		return
	}
	value := trimLeftOWS(h.value[:h.valueLen])
	long := h.valueLong
	switch h.pending {
	case hdrContentLength:
		value = trimOWS(value)
		h.lengths++
		if h.lengths == 1 {
			h.length, h.lengthBad = parseContentLength(value)
			h.lengthBad = h.lengthBad || long
			h.firstLen = copy(h.firstLength[:], value)
			if h.firstLen < len(value) {
				h.firstLen = -1 // too long to be a length: differs from any other
			}
		} else if long || h.firstLen < 0 || string(value) != string(h.firstLength[:h.firstLen]) {
			h.lengthDiffer = true
		}
	case hdrTransferEncoding:
		h.codings++
		h.chunked = !long && equalFoldLower(value, "chunked")
	case hdrConnection:
		h.connectionTokens(value)
	case hdrUpgrade:
		h.upgrades++
		if h.upgrades == 1 {
			h.upgrade = len(value) > 0
		}
	}
	h.pending = hdrOther
}

func (h *head) connectionTokens(v []byte) {
	for len(v) > 0 {
		var tok []byte
		tok, v, _ = bytes.Cut(v, []byte(","))
		tok = trimOWS(tok)
		switch {
		case equalFoldLower(tok, "close"):
			h.close = true
		case equalFoldLower(tok, "keep-alive"):
			h.keepAlive = true
		case equalFoldLower(tok, "upgrade"):
			h.connUpgrade = true
		}
	}
}

func headerKind(name []byte) int {
	switch {
	case equalFoldLower(name, "content-length"):
		return hdrContentLength
	case equalFoldLower(name, "transfer-encoding"):
		return hdrTransferEncoding
	case equalFoldLower(name, "connection"):
		return hdrConnection
	case equalFoldLower(name, "upgrade"):
		return hdrUpgrade
	}
	return hdrOther
}

// status parses a status line as net/http does: "HTTP/M.N", spaces, a
// three-character code (strconv.Atoi's syntax, not negative) and an
// optional reason after a space.
func (h *head) status(line []byte) bool {
	proto, rest, ok := bytes.Cut(line, []byte(" "))
	if !ok {
		return false
	}
	rest = bytes.TrimLeft(rest, " ") // only spaces, as net/http
	code, _, _ := bytes.Cut(rest, []byte(" "))
	if len(code) != 3 {
		return false
	}
	sign := 1
	switch code[0] {
	case '+':
		code = code[1:]
	case '-':
		code, sign = code[1:], -1
	}
	n := 0
	for _, c := range code {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	if n*sign < 0 {
		return false
	}
	h.code = n
	if len(proto) != len("HTTP/1.1") || string(proto[:5]) != "HTTP/" || proto[6] != '.' ||
		!isDigit(proto[5]) || !isDigit(proto[7]) {
		return false
	}
	h.major, h.minor = int(proto[5]-'0'), int(proto[7]-'0')
	return true
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// headerNameByte holds the bytes of a header name: those of a token (RFC
// 9110) and the space.
var headerNameByte = func() (t [256]bool) {
	for _, c := range []byte(" !#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") {
		t[c] = true
	}
	return t
}()

// checkValue refuses a header value with a control character, as
// net/textproto does; obs-text (bytes from 0x80) is allowed.
func checkValue(v []byte) error {
	// Eight bytes at a time while none is below a space or DEL; a word
	// with one (a tab, most often) is looked at byte by byte.
	for len(v) >= 8 {
		x := binary.LittleEndian.Uint64(v)
		del := x ^ (ones * 0x7f)
		if (x-ones*' ')&^x&highs|(del-ones)&^del&highs != 0 {
			break
		}
		v = v[8:]
	}
	for _, c := range v {
		if badValueByte[c] {
			return errMalformedHeader
		}
	}
	return nil
}

// ones and highs are the bytes 0x01 and 0x80 in every place of a word.
const ones, highs = 0x0101010101010101, 0x8080808080808080

var badValueByte = func() (t [256]bool) {
	for c := range ' ' {
		t[c] = c != '\t'
	}
	t[0x7f] = true
	return t
}()

// readLine reads one line without its line ending. A line longer than the
// read buffer comes back truncated to what the buffer holds; the next call
// returns the rest. The budget counts header bytes. A line cut by the end of
// the stream is a line, as net/textproto reads it: the end shows at the next
// read.
func (fc *conn) readLine(budget *int) (line []byte, truncated bool, err error) {
	line, err = fc.br.ReadSlice('\n')
	*budget -= len(line)
	if *budget < 0 {
		return nil, false, errHeaderTooLarge
	}
	switch err {
	case nil:
	case bufio.ErrBufferFull:
		return line, true, nil
	case io.EOF:
		if len(line) > 0 {
			return line, false, nil
		}
		return nil, false, io.EOF
	default:
		return line, false, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, false, nil
}

// skipLine drops the rest of a line readLine returned truncated.
func (fc *conn) skipLine(budget *int) error {
	for {
		line, err := fc.br.ReadSlice('\n')
		*budget -= len(line)
		if *budget < 0 {
			return errHeaderTooLarge
		}
		switch err {
		case nil:
			return nil
		case bufio.ErrBufferFull:
		default:
			return unexpectedEOF(err)
		}
	}
}

// parseContentLength parses a Content-Length as strconv.ParseUint(v, 10, 63)
// does.
func parseContentLength(b []byte) (n int64, bad bool) {
	if len(b) == 0 {
		return 0, true
	}
	for _, c := range b {
		if !isDigit(c) || n > (1<<63-1-int64(c-'0'))/10 {
			return 0, true
		}
		n = n*10 + int64(c-'0')
	}
	return n, false
}

// equalFoldLower compares b, in any case, with lower, given in lower case.
func equalFoldLower(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// trimOWS trims what net/textproto trims around a line or value: spaces
// and tabs.
func trimOWS(b []byte) []byte {
	return trimRightOWS(trimLeftOWS(b))
}

// trimLeftOWS and trimRightOWS are bytes.TrimLeft and TrimRight with " \t",
// without the cost of building a set on the hot path.
func trimLeftOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

func trimRightOWS(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
