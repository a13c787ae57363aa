// placeholder: being written in this session
