// Package service decides, as pure functions of values, what services need: cluster IPs
// and node ports from bitmap allocators over their ranges, and the Endpoints of a service
// computed from its pods. It does no I/O, reads no clock, draws randomness only from a
// source it is given and logs nothing; the service actor and the gateway apply it.
package service
