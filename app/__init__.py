"""The application layer: the one reply pipeline every front asks, its routing and its views."""
