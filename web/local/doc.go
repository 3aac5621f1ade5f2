// Package local implements the web layer's backends for one embedded sonda: a data
// directory opened by this process, whose index, link graph and crawl-state database the
// server reads, and in which it runs crawls (Runner) while serving. Pebble allows one
// opener, so the process that serves owns the data directory: crawls started through the
// API run in-process on the already open database (crawl.WithStore), which is what lets
// the relations page read the link graph while a crawl writes it.
package local
