module github.com/fleetsim/fleetsim

go 1.26

require pgregory.net/rapid v1.3.0

require go.uber.org/goleak v1.3.0
