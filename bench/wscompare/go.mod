module github.com/loadprobe/loadprobe/bench/wscompare

go 1.26.8

require (
	github.com/coder/websocket v1.8.15
	github.com/gobwas/ws v1.5.0
	github.com/gorilla/websocket v1.5.3
)

require github.com/gobwas/httphead v0.1.0 // indirect
