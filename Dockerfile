# nextcloud-mcp-bridge over streamable HTTP. Configuration is by environment (see .env.example);
# docker-compose.yml shows single-user and OAuth setups.

FROM python:3.11.11-slim-bookworm AS build
# `python` below is the base image's until the venv exists; `pip` is the venv's.
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH
WORKDIR /src
RUN python -m venv /opt/venv
# README.md is the package's long description, so the build needs it.
COPY pyproject.toml constraints.txt README.md ./
COPY nextcloud_mcp_server ./nextcloud_mcp_server
RUN pip install --no-cache-dir -c constraints.txt .

FROM python:3.11.11-slim-bookworm
# /data is created owned by the user before VOLUME, so a new named volume mounted there takes
# that owner and the non-root server can write its store.
RUN groupadd --system --gid 10001 mcp \
    && useradd --system --uid 10001 --gid mcp --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin mcp \
    && install -d -o mcp -g mcp -m 0750 /data
COPY --from=build /opt/venv /opt/venv
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    MCP_PORT=8000 \
    STORE_PATH=/data/nextcloud-mcp.sqlite3
VOLUME /data
USER 10001:10001
EXPOSE 8000
# 127.0.0.1 because the server refuses Host names outside MCP_ALLOWED_HOSTS (loopback always
# passes); the port follows MCP_PORT. Slim images have no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('MCP_PORT', '8000') + '/health', timeout=4)"]
ENTRYPOINT ["nextcloud-mcp-bridge"]
# A container binds 0.0.0.0; in single-user mode that needs --allow-remote (publish the port on
# loopback or put an authenticating proxy in front). MCP_ALLOWED_HOSTS must name the host names
# clients use. In OAuth mode (OIDC_ISSUER set) every request needs a token anyway.
CMD ["run", "--transport", "http", "--host", "0.0.0.0", "--allow-remote"]
