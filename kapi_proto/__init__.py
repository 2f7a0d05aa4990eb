"""Generated gRPC code for protos/ (scripts/genproto.py). Do not edit."""
