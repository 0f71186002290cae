"""The sessions this process serves: loading, lifecycle, leases, snapshots and model choice."""
