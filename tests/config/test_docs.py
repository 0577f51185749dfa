"""/docs/: a contents list of the README's sections and of docs/*.md, each served with its links and
images pointing where the pages serve them."""

import re

import pytest
from django.contrib.staticfiles import finders

from infrastructure import readme
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(client):
    client.force_login(UserFactory())
    return client


def test_the_index_lists_every_section_and_document(reader):
    content = reader.get("/docs/").content.decode()
    for slug in ("metrics", "gold-import-rules", "judges-vs-humans", "1-upload-a-run", "exports"):
        assert f'href="/docs/{slug}/"' in content
    assert len(re.findall(r'href="/docs/[\w-]+/"', content)) == len(readme.sections())


def test_links_and_images_of_every_section_resolve(reader):
    for slug in readme.sections():
        content = reader.get(f"/docs/{slug}/").content.decode()
        for address in re.findall(r'(?:href|src)="(/[^"]*)"', content):
            if address.startswith("/static/"):
                assert finders.find(address.removeprefix("/static/")), f"{slug}: {address}"
            else:
                assert reader.get(address).status_code == 200, f"{slug}: {address}"
        article = content.split(f'id="readme-{slug}"', 1)[1]
        assert not re.search(r'(?:href|src)="(?:#|docs/)', article), slug


def test_the_user_guide_shows_its_screenshots(reader):
    content = reader.get("/docs/1-upload-a-run/").content.decode()
    assert '<img src="/static/docs/screenshots/upload.png" alt="Upload page"' in content
    assert 'href="/docs/where-your-runs-come-from/"' in content
    assert 'href="/docs/exports/"' in reader.get("/docs/6-export/").content.decode()
