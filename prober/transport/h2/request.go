package h2

// AppendField appends the field name: value to a request's header block,
// as a literal the server does not add to its table (RFC 7541, 6.2.2),
// with the name's static index when it has one. The client so keeps no
// encoder state: a block is the same bytes on every connection, and can
// be written once for all the requests of a probe. name must be lower
// case; pseudo-header fields come first.
func AppendField(dst []byte, name string, value []byte) []byte {
	if i, ok := staticNames[name]; ok {
		dst = appendInt(dst, 4, 0, i)
	} else {
		dst = append(dst, 0)
		dst = appendInt(dst, 7, 0, uint64(len(name)))
		dst = append(dst, name...)
	}
	dst = appendInt(dst, 7, 0, uint64(len(value)))
	return append(dst, value...)
}
