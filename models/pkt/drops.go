package pkt

// Reason is a named drop reason. The names are the JSON keys of `drops`.
type Reason uint8

// Drop reasons, in report order.
const (
	RxMissed        Reason = iota // NIC ring had no free descriptor (rx_missed_errors)
	NICCap                        // above the NIC's packet-rate capability (XL710 ~36 Mpps)
	XDPDrop                       // XDP_DROP verdict
	XDPAborted                    // XDP_ABORTED or failed action
	XDPTxErr                      // XDP_TX ring full
	CpumapEnqueue                 // cpumap ptr_ring full at bq_flush_to_queue
	CpumapProgDrop                // cpumap program returned XDP_DROP
	CpumapKmemAlloc               // skb allocation failure in the kthread
	Backlog                       // netdev_max_backlog exceeded (softnet dropped)
	NFRaw                         // dropped by an iptables raw-table PREROUTING rule
	Rcvbuf                        // socket receive buffer full (RcvbufErrors)
	UDPNoPorts                    // no socket listening (UdpNoPorts)
	VethRingFull                  // veth ptr_ring full (peer's tx_dropped)
	TCPOutOfWindow                // TCP segment beyond the advertised window
	TCPDup                        // TCP segment whose data the receiver already has (a retransmission that was not needed)
	DevmapXmit                    // devmap egress XDP TX ring full (xdp_devmap_xmit drops)
	NumReasons
)

var reasonNames = [NumReasons]string{
	"rx_missed", "nic_cap", "xdp_drop", "xdp_aborted", "xdp_tx_err",
	"cpumap_enqueue", "cpumap_prog_drop", "cpumap_kmem_alloc", "backlog",
	"iptables_raw", "rcvbuf", "udp_noports", "veth_ring_full", "tcp_out_of_window",
	"tcp_dup", "devmap_xmit",
}

// String returns the reason's report name.
func (r Reason) String() string {
	if r < NumReasons {
		return reasonNames[r]
	}
	return "unknown"
}

// Delivery is where a packet's journey ended without a drop.
type Delivery uint8

// Deliveries, in report order.
const (
	ToSocket   Delivery = iota // queued to a socket's receive queue
	XDPTx                      // transmitted back by XDP_TX
	Redirected                 // redirected to another device (sent on a devmap egress ring, or a target outside the model)
	ToStack                    // handed to the stack where the stack is not modelled further
	NumDeliveries
)

var deliveryNames = [NumDeliveries]string{"socket", "xdp_tx", "redirected", "stack"}

// String returns the delivery's report name.
func (d Delivery) String() string {
	if d < NumDeliveries {
		return deliveryNames[d]
	}
	return "unknown"
}

// Ledger counts where wire packets (segments) went. Counts are in wire
// segments, so a GRO super-packet of 10 segments counts 10.
type Ledger struct {
	Offered   uint64
	Dropped   [NumReasons]uint64
	Delivered [NumDeliveries]uint64
}

// Offer records n packets entering the model.
func (l *Ledger) Offer(n int) { l.Offered += uint64(n) }

// Drop records n packets dropped for r.
func (l *Ledger) Drop(r Reason, n int) { l.Dropped[r] += uint64(n) }

// Deliver records n packets ending at d.
func (l *Ledger) Deliver(d Delivery, n int) { l.Delivered[d] += uint64(n) }

// DroppedTotal returns all drops.
func (l *Ledger) DroppedTotal() uint64 {
	var s uint64
	for _, v := range l.Dropped {
		s += v
	}
	return s
}

// DeliveredTotal returns all deliveries.
func (l *Ledger) DeliveredTotal() uint64 {
	var s uint64
	for _, v := range l.Delivered {
		s += v
	}
	return s
}

// Queuer reports how many wire packets a model holds right now.
type Queuer interface {
	Queued() int
}

// Check verifies conservation: offered = delivered + dropped + queued.
// It returns the imbalance (0 when conserved).
func (l *Ledger) Check(queued int) int64 {
	return int64(l.Offered) - int64(l.DeliveredTotal()) - int64(l.DroppedTotal()) - int64(queued)
}
