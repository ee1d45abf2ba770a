// Package control is the contract between the generic object actor and the kinds'
// controllers: a Controller decides what its object needs, an Effects value carries
// it out. It links no actor runtime and no store, so a controller neither knows nor
// cares which actor, process or replica runs it.
package control
