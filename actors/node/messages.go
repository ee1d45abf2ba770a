package node

// EvictorName names the one actor that owns the Evictor.
const EvictorName = "evictor"

// EvictRequest asks the evictor to delete a node's pods when a token allows.
type EvictRequest struct{ Eviction }

// EvictCancel withdraws a node's eviction request.
type EvictCancel struct{ Node string }
