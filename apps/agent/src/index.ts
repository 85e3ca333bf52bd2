// ito-agent, the SSH-less node agent (dial out, pull tasks, heartbeat; process and simulated executors),
// lands here with the stages work. Its HTTP client is @ito/client.
export {};
