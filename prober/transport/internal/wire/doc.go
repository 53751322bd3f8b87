// Package wire is what every transport shares: the seam they implement
// (Conn, and Capturer for a client that can hand a response to a flow's
// captures), the dial and the TLS handshake of a connection, the tracking
// of the connections a transport must release, the classification of an
// error into an outcome, and the bounds and helpers of HTTP that the lean
// clients, net/http's and the WebSocket client apply alike.
package wire
