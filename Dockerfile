# The image manifests/base/deployment.yaml runs: one process, non-root, read-only root fs.
FROM python:3.11-slim AS build
WORKDIR /src
COPY setup.cfg pyproject.toml README.md ./
COPY volcano_py ./volcano_py
COPY webhooks ./webhooks
RUN python -m pip wheel --no-cache-dir --wheel-dir /wheels .

FROM python:3.11-slim
RUN useradd --uid 65532 --user-group --no-create-home --shell /usr/sbin/nologin volcano
COPY --from=build /wheels /wheels
RUN python -m pip install --no-cache-dir /wheels/*.whl && rm -rf /wheels
USER 65532:65532
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
EXPOSE 8443 8080
ENTRYPOINT ["volcano-py"]
CMD ["manager"]
