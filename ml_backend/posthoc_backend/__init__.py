"""The ML backend: a Flask 3 app speaking Label Studio's ML backend protocol."""
