// The stage workers (data prep, planning, curriculum and eval gates, post-training) and the heartbeat
// monitor land here with the stages work; ito-server's worker role already hosts registered workers.
export {};
