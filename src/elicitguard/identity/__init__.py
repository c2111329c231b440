"""identity package."""
