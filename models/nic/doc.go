// Package nic models the receiving device: ixgbe (82599 10G) and i40e
// (XL710 40G) descriptor rings with RSS queues, MSI-X vectors with interrupt
// moderation (fixed and the drivers' adaptive ITR algorithms), ring refill in
// batches, ring-full drops (rx_missed), the XL710's packet-rate capability,
// and the driver poll loop (ixgbe_clean_rx_irq / i40e_clean_rx_irq) that runs
// the XDP program per descriptor and bulks XDP_TX doorbells and redirect
// flushes at the end of the poll.
//
// Arrivals are not events: a ring pulls the packets that have arrived up to
// the poll's local clock from its Source when the poll reads it, counting
// those that found no free descriptor as rx_missed. Kernel files followed:
// drivers/net/ethernet/intel/ixgbe/ixgbe_main.c (ixgbe_poll,
// ixgbe_clean_rx_irq, ixgbe_update_itr, ixgbe_set_itr),
// drivers/net/ethernet/intel/i40e/i40e_txrx.c (i40e_napi_poll,
// i40e_clean_rx_irq, i40e_update_itr, i40e_update_enable_itr).
// Left out: TX cleaning work inside the poll (no TX traffic on the RX
// queues), multi-buffer frames, Flow Director/ATR, descriptor write-back
// coalescing (write-back is immediate), PCIe bandwidth limits.
package nic
