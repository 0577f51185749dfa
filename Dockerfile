FROM python:3.11-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    DJANGO_SETTINGS_MODULE=config.settings.production

WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends libpq5 && rm -rf /var/lib/apt/lists/*
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN SECRET_KEY=collectstatic-only-$(head -c 48 /dev/urandom | base64 | tr -d '/+=') ALLOWED_HOSTS=localhost METRICS_ENABLED=false \
    python manage.py collectstatic --noinput

RUN useradd --create-home --uid 1000 trajscope && mkdir -p /app/var && chown -R trajscope /app/var
USER trajscope
EXPOSE 8000
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "120"]
