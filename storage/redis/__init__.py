"""The fingerprint store on Redis and Redis Cluster: the store, its key layout and its ACL."""
