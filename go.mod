module github.com/fleetsim/fleetsim

go 1.26

require pgregory.net/rapid v1.3.0

require (
	go.uber.org/goleak v1.3.0
	golang.org/x/net v0.44.0
)

require github.com/stretchr/testify v1.8.1 // indirect
