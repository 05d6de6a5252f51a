"""fabricgen observe: RoCE counters of every device and host, their history, and health judged against intent."""
