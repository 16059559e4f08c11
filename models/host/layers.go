package host

// Layers returns the model layers applied after the first path (NIC, NAPI,
// XDP), in order. Each later model (stack, backlog, cpumap, GRO, TCP) adds
// its Builder here.
func Layers() []Builder {
	return []Builder{VethLayer, StackLayer, TCPLayer}
}
