module github.com/fleetsim/fleetsim

go 1.26

require (
	go.etcd.io/bbolt v1.5.0
	go.uber.org/goleak v1.3.0
	pgregory.net/rapid v1.3.0
)

require golang.org/x/sys v0.45.0 // indirect
